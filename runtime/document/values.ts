// Field values between the wire, the database and documents: timestamps, coercion and decoding per field type.
import { DataError } from '../errors/errors';
import { FIELD_TYPE_INFO, assertNever } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

let lastMicros = 0;
/** The `YYYY-MM-DD HH:MM:SS` text of the second `lastSecond`: formatted once per second, not per call. */
let lastSecond = -1;
let secondText = '';

/** Now as Frappe writes it: `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), strictly increasing within the process. */
export function now(): string {
  let micros = Date.now() * 1000;
  if (micros <= lastMicros) micros = lastMicros + 1;
  // A zero fraction would be written '.000000' but read back without it (formatDatetime): never make one.
  if (micros % 1_000_000 === 0) micros += 1;
  lastMicros = micros;
  const second = Math.floor(micros / 1_000_000);
  if (second !== lastSecond) {
    const d = new Date(second * 1000);
    secondText = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    lastSecond = second;
  }
  return `${secondText}.${pad(micros % 1_000_000, 6)}`;
}

/** Today's date, `YYYY-MM-DD` (UTC). */
export function today(): string {
  return now().slice(0, 10);
}

/** A datetime already in Frappe's form (six digits of fraction, not all zero, or none): what stores hold. */
const FRAPPE_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.(?!0{6})\d{6})?$/;

/** Frappe's string form of a datetime: the fraction is dropped when it is zero, else six digits. */
export function formatDatetime(value: string): string {
  // Stored values are mostly in that form already: a test, not a match array and four strings per read datetime.
  if (FRAPPE_DATETIME.test(value)) return value;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(?::(\d{2}))?(?:\.(\d{1,9}))?/.exec(value);
  if (!m) return value;
  const seconds = m[3] ?? '00';
  const fraction = (m[4] ?? '').slice(0, 6).padEnd(6, '0');
  return `${m[1]} ${m[2]}:${seconds}${/^0*$/.test(fraction) ? '' : `.${fraction}`}`;
}

/** Frappe's string form of a time (`H:MM:SS`, fraction kept when non-zero). */
export function formatTime(value: string): string {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.(\d{1,9}))?$/.exec(value);
  if (!m) return value;
  const fraction = (m[4] ?? '').slice(0, 6).padEnd(6, '0');
  return `${Number(m[1])}:${m[2]}:${m[3] ?? '00'}${/^0*$/.test(fraction) ? '' : `.${fraction}`}`;
}

function validDate(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

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
      return value;
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw badValue(field, 'must be a finite number');
      if (info.value === 'integer' && !Number.isSafeInteger(value))
        throw badValue(field, 'must be an integer');
      return value;
    case 'check':
      return value ? 1 : 0;
    case 'date': {
      if (value === '') return null;
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(value));
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3])))
        throw badValue(field, `"${String(value)}" is not a valid date (YYYY-MM-DD)`);
      return value;
    }
    case 'datetime': {
      if (value === '') return null;
      const text = String(value);
      const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
      const [h, mi, s] = [Number(m?.[4] ?? 0), Number(m?.[5] ?? 0), Number(m?.[6] ?? 0)];
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3])) || h > 23 || mi > 59 || s > 59) {
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

/** A stored value as the API shows it (database drivers differ: JSON text, time precision, datetime strings). */
export function decodeValue(field: FieldMeta, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const info = FIELD_TYPE_INFO[field.fieldtype];
  switch (info.value) {
    case 'datetime':
      return formatDatetime(String(value));
    case 'time':
      return formatTime(String(value));
    case 'date':
      return String(value).slice(0, 10);
    case 'json':
      if (typeof value !== 'string') return value;
      try {
        return JSON.parse(value);
      } catch {
        return value;
      }
    case 'integer':
    case 'number':
    case 'check':
      return typeof value === 'number' ? value : Number(value);
    default:
      return value;
  }
}

/** A value in the form the database column takes. */
export function encodeValue(field: FieldMeta, value: unknown): unknown {
  if (value === undefined) return null;
  if (FIELD_TYPE_INFO[field.fieldtype].value === 'json' && value !== null) return JSON.stringify(value);
  return value;
}
