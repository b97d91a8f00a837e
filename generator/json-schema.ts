// JSON Schema for DocType fields: one builder shared by the ajv validators and the OpenAPI documents.
import {
  DECIMAL_LIMITS,
  FIELD_TYPE_INFO,
  INTEGER_RANGE,
  assertNever,
  isTableType,
  type ColumnKind,
} from '../runtime/meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../runtime/meta/types';
import type { GeneratorContext } from './context';

/** A JSON Schema object (kept loose: it is serialized, never interpreted here). */
export type JsonSchema = Record<string, unknown>;

/**
 * Frappe's wire format for dates and times, checked by pattern (calendar validity is checked at runtime). An empty
 * string is taken too and stored as NULL, as Frappe's get_valid_dict does for Date, Datetime and Time.
 */
export const DATE_PATTERN = '^(\\d{4}-\\d{2}-\\d{2})?$';
export const DATETIME_PATTERN = '^(\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?)?)?$';
export const TIME_PATTERN = '^(\\d{1,2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?)?$';

const nullable = (schema: JsonSchema): JsonSchema => {
  const type = schema.type;
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return schema;
};

/**
 * The values a numeric column holds on every database (INTEGER_RANGE and DECIMAL_LIMITS; a Long Int the safe
 * integers). A value past them is a 400 naming the field, not the database's overflow error (a 500 on MariaDB and
 * PostgreSQL, stored as given on SQLite).
 */
function columnRange(column: ColumnKind, nonNegative: boolean | undefined): JsonSchema {
  const integer = INTEGER_RANGE[column];
  const decimal = DECIMAL_LIMITS[column];
  const [low, high, exclusive] = integer
    ? [integer[0], integer[1], false]
    : decimal
      ? [-decimal.below, decimal.below, true]
      : [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, false];
  const min = nonNegative ? { minimum: 0 } : exclusive ? { exclusiveMinimum: low } : { minimum: low };
  return { ...min, ...(exclusive ? { exclusiveMaximum: high } : { maximum: high }) };
}

/** Schema of one field's value. `rows` recurses into the child DocType (one level, as Frappe allows). */
export function fieldSchema(
  field: FieldMeta,
  ctx: GeneratorContext,
  rowSchema: (child: DocTypeMeta) => JsonSchema,
): JsonSchema {
  const info = FIELD_TYPE_INFO[field.fieldtype];
  const described = (schema: JsonSchema): JsonSchema => ({ ...schema, description: field.label });
  switch (info.value) {
    case 'string': {
      if (field.selectOptions) {
        const options = [...new Set(['', ...field.selectOptions])];
        return described({ type: ['string', 'null'], enum: [...options, null] });
      }
      const maxLength = info.column === 'varchar' ? (field.length ?? 140) : undefined;
      return described(nullable({ type: 'string', ...(maxLength ? { maxLength } : {}) }));
    }
    case 'integer':
    case 'number':
      return described(nullable({ type: info.value, ...columnRange(info.column, field.nonNegative) }));
    case 'check':
      return described({ type: 'integer', enum: [0, 1] });
    case 'date':
      return described(nullable({ type: 'string', pattern: DATE_PATTERN }));
    case 'datetime':
      return described(nullable({ type: 'string', pattern: DATETIME_PATTERN }));
    case 'time':
      return described(nullable({ type: 'string', pattern: TIME_PATTERN }));
    case 'json':
      return described({ type: ['object', 'array', 'string', 'number', 'boolean', 'null'] });
    case 'rows': {
      const child = field.options ? ctx.byName.get(field.options) : undefined;
      return described({ type: 'array', items: child ? rowSchema(child.meta) : { type: 'object' } });
    }
    case 'none':
      return {};
    default:
      return assertNever(info.value);
  }
}

/** Fields of a DocType that a request body may carry (layout fields excluded). */
export function bodyFields(meta: DocTypeMeta): FieldMeta[] {
  return meta.fields.filter((f) => FIELD_TYPE_INFO[f.fieldtype].column !== 'none');
}

/** Fields that a create must end up with (after defaults): reqd without a default, tables excluded. */
export function requiredFields(meta: DocTypeMeta): string[] {
  return meta.fields
    .filter((f) => f.reqd && f.default === undefined && !isTableType(f.fieldtype))
    .map((f) => f.fieldname);
}
