// Field values as the database holds them and documents read them: Frappe's timestamps (written and read back),
// and each field type's value decoded from its column and encoded into it.
import { FIELD_TYPE_INFO } from '../meta/field-types';
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

/**
 * Whether year-month-day is a calendar date of the years 1 to 9999 (setUTCFullYear: Date.UTC would read the years 0 to
 * 99 as 1900 to 1999). Year 0 is none: PostgreSQL has no such year.
 */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return year >= 1 && d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

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

/**
 * The stored form of a time: `HH:MM:SS`, two-digit hours (fraction kept when non-zero), so that SQLite, which keeps
 * it as text, compares and orders times as MariaDB and PostgreSQL do (`5:00` sorted after `10:00` as text). Filter
 * values take it too. The API shows Frappe's `H:MM:SS` (formatTime).
 */
export function storedTime(value: string): string {
  const time = formatTime(value);
  return /^\d:/.test(time) ? `0${time}` : time;
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
  if (value === null) return value;
  const kind = FIELD_TYPE_INFO[field.fieldtype].value;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'time' && typeof value === 'string') return storedTime(value);
  return value;
}
