// Field values from the wire checked and normalized per field type, before a document is written.
import { DataError } from '../errors/errors';
import { formatDatetime, formatTime, isCalendarDate } from '../db/stored-values';
import { DECIMAL_LIMITS, FIELD_TYPE_INFO, assertNever } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';

/** Bytes a `text` column holds on every database (MariaDB's TEXT). */
const TEXT_BYTES = 65_535;

/** The error for a bad value of `field`, naming the field. */
function badValue(field: FieldMeta, why: string): DataError {
  return new DataError(`${field.label} (${field.fieldname}): ${why}`);
}

/**
 * Checks and normalizes a value that already passed the generated ajv validator (which coerced the JSON
 * types): calendar-valid dates and times, and the storage form of each type. Throws DataError naming the field.
 */
export function normalizeValue(field: FieldMeta, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const info = FIELD_TYPE_INFO[field.fieldtype];
  switch (info.value) {
    case 'string':
      if (typeof value !== 'string') throw badValue(field, 'must be text');
      if (/[\u0000]/.test(value)) throw badValue(field, 'must not contain NUL characters');
      if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value))
        throw badValue(field, 'contains a lone surrogate');
      // A `text` column holds 65,535 bytes on MariaDB (TEXT): refused on every database alike. Only a value of more
      // than a quarter of that in UTF-16 units can have that many bytes.
      if (info.column === 'text' && value.length > TEXT_BYTES / 4 && Buffer.byteLength(value) > TEXT_BYTES)
        throw badValue(field, `is longer than its column holds (${TEXT_BYTES} bytes of UTF-8)`);
      return value;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw badValue(field, 'must be a finite number');
      if (info.value === 'integer' && !Number.isSafeInteger(value))
        throw badValue(field, 'must be an integer');
      // Stored as MariaDB's and PostgreSQL's decimal columns keep it (9 places; a Rating 2), on SQLite too, so every
      // database reads back, filters and sums the same value, and the answer to the write shows what was stored.
      const limits = DECIMAL_LIMITS[info.column];
      if (limits === undefined) return value;
      const stored = Number(value.toFixed(limits.places)) || 0;
      // The schema checked the value as sent; rounded, 9.999 is a Rating of 10, which decimal(3,2) cannot hold.
      if (Math.abs(stored) >= limits.below)
        throw badValue(
          field,
          `must be between -${limits.below} and ${limits.below} (exclusive) once rounded`,
        );
      return stored;
    }
    case 'check':
      return value ? 1 : 0;
    case 'date': {
      if (value === '') return null;
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(value));
      if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])))
        throw badValue(field, `"${String(value)}" is not a valid date (YYYY-MM-DD)`);
      return value;
    }
    case 'datetime': {
      if (value === '') return null;
      const text = String(value);
      const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
      const [h, mi, s] = [Number(m?.[4] ?? 0), Number(m?.[5] ?? 0), Number(m?.[6] ?? 0)];
      if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])) || h > 23 || mi > 59 || s > 59) {
        throw badValue(field, `"${text}" is not a valid datetime (YYYY-MM-DD HH:MM:SS)`);
      }
      return formatDatetime(m[4] === undefined ? `${text} 00:00:00` : text);
    }
    case 'time': {
      if (value === '') return null;
      const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?/.exec(String(value));
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59)
        throw badValue(field, `"${String(value)}" is not a valid time`);
      return formatTime(String(value));
    }
    case 'json':
      return value;
    case 'rows':
    case 'none':
      return value;
    default:
      return assertNever(info.value);
  }
}
