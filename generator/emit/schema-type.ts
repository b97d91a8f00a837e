// JSON Schema to TypeScript type text, for the typed client: the subset the generator's own schemas use (types,
// enum, const, arrays and tuples, objects with required keys, anyOf/oneOf/allOf, `$ref` to a component).
import type { JsonSchema } from '../json-schema';
import { quote, tsLiteral } from '../ts/literal';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key as TypeScript writes it (quoted when it is not an identifier). */
export const propertyKey = (name: string) => (IDENTIFIER.test(name) ? name : quote(name));

const literal = (value: unknown) => tsLiteral(value);

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length ? unique.join(' | ') : 'never';
}

const wrap = (text: string) => (/[|&]/.test(text) ? `(${text})` : text);

function objectType(schema: JsonSchema, indent: string, refs: RefNames): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([name, s]) => {
    const doc =
      typeof s.description === 'string' && s.description
        ? `${inner}/** ${s.description.replace(/\*\//g, '* /')} */\n`
        : '';
    const readOnly = s.readOnly === true ? 'readonly ' : '';
    return `${doc}${inner}${readOnly}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${schemaType(s, inner, refs)};`;
  });
  const extra = schema.additionalProperties;
  if (extra === true || (extra !== undefined && extra !== false && Object.keys(extra as object).length === 0))
    lines.push(`${inner}[key: string]: unknown;`);
  else if (extra && typeof extra === 'object')
    lines.push(`${inner}[key: string]: ${schemaType(extra as JsonSchema, inner, refs)};`);
  else if (extra === undefined && lines.length === 0) return 'Record<string, unknown>';
  return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : 'Record<string, never>';
}

function typeOf(name: string, schema: JsonSchema, indent: string, refs: RefNames): string {
  switch (name) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(schema.prefixItems))
        return `[${(schema.prefixItems as JsonSchema[]).map((s) => schemaType(s, indent, refs)).join(', ')}]`;
      return `${wrap(schemaType((schema.items ?? {}) as JsonSchema, indent, refs))}[]`;
    }
    case 'object':
      return objectType(schema, indent, refs);
    default:
      return 'unknown';
  }
}

/** The type name a `$ref` to component `X` becomes. */
export type RefNames = (component: string) => string;

/** The TypeScript type of `schema`; `$ref`s to `#/components/schemas/X` become `refs(X)` (default `X`). */
export function schemaType(schema: JsonSchema, indent = '', refs: RefNames = (name) => name): string {
  if (typeof schema.$ref === 'string') return refs(schema.$ref.split('/').pop() as string);
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union((schema.enum as unknown[]).map(literal));
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return union(alternatives.map((s) => schemaType(s, indent, refs)));
  if (Array.isArray(schema.allOf))
    return (schema.allOf as JsonSchema[]).map((s) => wrap(schemaType(s, indent, refs))).join(' & ');
  const type = schema.type;
  if (Array.isArray(type)) return union((type as string[]).map((t) => typeOf(t, schema, indent, refs)));
  if (typeof type === 'string') return typeOf(type, schema, indent, refs);
  if (schema.properties) return objectType(schema, indent, refs);
  return 'unknown';
}
