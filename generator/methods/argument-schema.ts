// The JSON Schema of a whitelisted method's argument, read from its TypeScript type through the type checker.
import { type Node, type Type, ts } from 'ts-morph';
import type { JsonSchema } from '../json-schema';

/** Names a request can never pass to a method (as Frappe's `frappe.call` drops them). */
export const FORBIDDEN_ARGUMENTS: readonly string[] = ['ignore_permissions', 'flags'];

/** Nesting deeper than this is accepted as any value (recursive types would not end otherwise). */
const MAX_DEPTH = 8;

/** Thrown for a type that has no JSON form (functions, classes such as Date, symbols, bigints). */
export class UnsupportedArgumentType extends Error {}

const PRIMITIVE_ORDER = ['string', 'number', 'boolean', 'null'];
const isPrimitive = (t: Type) => t.isString() || t.isNumber() || t.isBoolean() || t.isNull();
const primitiveName = (t: Type): string =>
  t.isString() ? 'string' : t.isNumber() ? 'number' : t.isNull() ? 'null' : 'boolean';
const isLiteral = (t: Type) =>
  t.isStringLiteral() || t.isNumberLiteral() || t.isBooleanLiteral() || t.isNull();
const literalValue = (t: Type): unknown =>
  t.isBooleanLiteral() ? t.getText() === 'true' : t.isNull() ? null : t.getLiteralValue();

function unionSchema(type: Type, at: Node, depth: number): JsonSchema {
  const members = type.getUnionTypes().filter((t) => !t.isUndefined());
  // `boolean` is the union `true | false`: fold it back so `boolean | null` reads as two plain types.
  const hasTrue = members.some((t) => t.isBooleanLiteral() && t.getText() === 'true');
  const hasFalse = members.some((t) => t.isBooleanLiteral() && t.getText() === 'false');
  const folded = hasTrue && hasFalse ? members.filter((t) => !t.isBooleanLiteral()) : members;
  const plain: string[] = hasTrue && hasFalse ? ['boolean'] : [];
  if (folded.length === 1 && plain.length === 0) return typeSchema(folded[0] as Type, at, depth);
  if (folded.every(isPrimitive)) {
    // A fixed order, whatever order the checker keeps union members in.
    const types = PRIMITIVE_ORDER.filter(
      (name) => plain.includes(name) || folded.some((t) => primitiveName(t) === name),
    );
    return { type: types.length === 1 ? types[0] : types };
  }
  if (plain.length === 0 && folded.every(isLiteral)) {
    return {
      enum: folded
        .map(literalValue)
        .sort((a, b) =>
          JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0,
        ),
    };
  }
  const schemas = folded.map((t) => typeSchema(t, at, depth));
  if (plain.length) schemas.unshift({ type: 'boolean' });
  return { anyOf: schemas };
}

function objectSchema(type: Type, at: Node, depth: number): JsonSchema {
  if (type.getCallSignatures().length || type.getConstructSignatures().length) {
    throw new UnsupportedArgumentType(`${type.getText(at)} is a function and has no JSON form`);
  }
  const symbolName = type.getSymbol()?.getName();
  if (
    symbolName &&
    ['Date', 'Map', 'Set', 'RegExp', 'Promise', 'Buffer', 'Uint8Array'].includes(symbolName)
  ) {
    throw new UnsupportedArgumentType(`${symbolName} has no JSON form; use a string or a plain object`);
  }
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const prop of type.getProperties()) {
    const name = prop.getName();
    const optional = prop.hasFlags(ts.SymbolFlags.Optional);
    const propType = prop.getTypeAtLocation(at);
    properties[name] = typeSchema(propType, at, depth + 1);
    if (
      !optional &&
      !propType.getUnionTypes().some((t) => t.isUndefined()) &&
      !propType.isAny() &&
      !propType.isUnknown()
    )
      required.push(name);
  }
  const index = type.getStringIndexType();
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: index ? typeSchema(index, at, depth + 1) : false,
  };
}

/** The JSON Schema of `type` as seen at `at`; throws UnsupportedArgumentType for types without a JSON form. */
export function typeSchema(type: Type, at: Node, depth = 0): JsonSchema {
  if (depth > MAX_DEPTH || type.isAny() || type.isUnknown()) return {};
  if (type.isUnion() && !type.isBoolean()) return unionSchema(type, at, depth);
  if (type.isBoolean()) return { type: 'boolean' };
  if (type.isString()) return { type: 'string' };
  if (type.isNumber()) return { type: 'number' };
  if (type.isNull()) return { type: 'null' };
  if (type.isStringLiteral() || type.isNumberLiteral() || type.isBooleanLiteral())
    return { enum: [literalValue(type)] };
  if (type.isArray())
    return { type: 'array', items: typeSchema(type.getArrayElementTypeOrThrow(), at, depth + 1) };
  if (type.isTuple()) {
    const items = type.getTupleElements().map((t) => typeSchema(t, at, depth + 1));
    return { type: 'array', prefixItems: items, minItems: items.length, maxItems: items.length };
  }
  if (type.isIntersection() || type.isObject()) return objectSchema(type, at, depth);
  if (type.getText() === 'object') return { type: 'object' };
  throw new UnsupportedArgumentType(`${type.getText(at)} has no JSON form`);
}

/** Top-level argument names whose values may arrive as JSON text in a query string (objects and arrays). */
export function jsonArguments(schema: JsonSchema): string[] {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const structured = (s: JsonSchema): boolean => {
    const t = s.type;
    const types = Array.isArray(t) ? t : t === undefined ? [] : [t];
    if (types.includes('object') || types.includes('array')) return true;
    if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).some(structured);
    return Object.keys(s).length === 0;
  };
  return Object.keys(props).filter((k) => structured(props[k] as JsonSchema));
}
