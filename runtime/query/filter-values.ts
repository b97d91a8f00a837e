// Filter operators and values checked and coerced to the column's type, so both databases compare alike (MariaDB
// would compare a text column with a number numerically) and a NULL behaves as Frappe's fallback value.
import { DataError } from '../errors/errors';
import { formatDatetime, isCalendarDate, storedTime } from '../db/stored-values';
import type { FilterOperator } from './filter-tree';
import type { ColumnKind } from './columns';
import { timespanRange } from './timespan';
import { clip } from './tokenize';

/** Every operator name accepted from users, with Frappe's spellings, mapped to the tree's operator. */
const OPERATOR_NAMES: Record<string, FilterOperator> = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '>': '>',
  '<': '<',
  '>=': '>=',
  '=>': '>=',
  '<=': '<=',
  '=<': '<=',
  like: 'like',
  'not like': 'not like',
  in: 'in',
  'not in': 'not in',
  between: 'between',
  is: 'is',
  timespan: 'timespan',
  previous: 'previous',
  next: 'next',
};

/** The periods of `previous` and `next`: the timespan each names after `last` / `next` (Frappe's get_date_range). */
const PERIODS: Record<string, string> = {
  '1 week': 'week',
  '1 month': 'month',
  '3 months': 'quarter',
  '6 months': '6 months',
  '1 year': 'year',
};

/** The most values an `in` / `not in` list may hold. */
export const MAX_IN_VALUES = 10_000;

/** A condition in the form the query builder emits: a plain operator and coerced values. */
export type NormalizedCondition =
  | { op: '=' | '!=' | '>' | '<' | '>=' | '<=' | 'like' | 'not like'; value: string | number }
  | { op: 'in' | 'not in'; value: (string | number)[] }
  | { op: 'between'; value: [string | number, string | number] }
  | { op: 'is'; value: 'set' | 'not set' };

/** Parses an operator name (case-insensitive, Frappe's aliases); 400 for anything else. */
export function parseOperator(raw: unknown): FilterOperator {
  const name = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/\s+/g, ' ') : undefined;
  const op = name === undefined ? undefined : OPERATOR_NAMES[name];
  if (!op)
    throw new DataError(
      `filters: Operator must be one of ${Object.keys(OPERATOR_NAMES).join(', ')}; got "${clip(raw)}"`,
    );
  return op;
}

/** The value a NULL stands for in comparisons (Frappe's `ifnull` fallback); undefined for never-NULL columns. */
export function nullFallback(kind: ColumnKind): string | number {
  switch (kind) {
    case 'integer':
    case 'number':
    case 'check':
      return 0;
    case 'date':
      return '0001-01-01';
    case 'datetime':
      return '0001-01-01 00:00:00';
    case 'time':
      return '0:00:00';
    default:
      return '';
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?$/;

/**
 * A pattern ending in a lone escape (`\`) ends in a literal backslash, as SQLite and MariaDB read it and likeMatches
 * does: PostgreSQL refuses such a pattern (a 500 there), so the escape is doubled.
 */
function literalTrailingEscape(pattern: string): string {
  const trailing = pattern.length - pattern.replace(/\\+$/, '').length;
  return trailing % 2 === 1 ? `${pattern}\\` : pattern;
}

/**
 * Text as a filter value: no stored text holds a NUL (it is refused on write), and PostgreSQL cannot even bind one, so
 * a value with one is a 400 on every database.
 */
function noNul(text: string, label: string): string {
  if (text.includes('\u0000'))
    throw new DataError(`filters: ${label} holds a NUL character, which no value can`);
  return text;
}

/** Coerces one value for a column of `kind`; `end` widens a bare date to the end of its day (between on Datetime). */
export function coerceValue(kind: ColumnKind, value: unknown, label: string, end = false): string | number {
  const bad = (what: string) => new DataError(`filters: ${label} needs ${what}; got ${clip(value)}`);
  if (typeof value === 'boolean') value = value ? 1 : 0;
  switch (kind) {
    case 'integer':
    case 'number':
    case 'check': {
      if (value === '') return 0;
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)
            ? Number(value)
            : NaN;
      if (!Number.isFinite(n)) throw bad('a number');
      // A whole number JavaScript holds exactly: PostgreSQL binds the value as the column's bigint, which refuses a
      // fraction or a value past its range (a 500 there, a quiet no-match elsewhere): 400 on every database.
      if (kind !== 'number' && !Number.isSafeInteger(n)) throw bad('a whole number up to 2^53 - 1');
      // A Check is a smallint on PostgreSQL, which refuses to compare it with a wider value (a 500 there).
      if (kind === 'check' && (n < -32768 || n > 32767))
        throw bad('a whole number from -32768 to 32767 (a Check holds 0 or 1)');
      return n;
    }
    case 'date': {
      const text = typeof value === 'string' ? value.trim() : '';
      const m = DATE.exec(text.slice(0, 10));
      if (
        !m ||
        !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])) ||
        (text.length > 10 && !DATETIME.test(text))
      )
        throw bad('a date (YYYY-MM-DD)');
      return text.slice(0, 10);
    }
    case 'datetime': {
      const text = typeof value === 'string' ? value.trim() : '';
      const m = DATE.exec(text) ?? DATETIME.exec(text);
      if (
        !m ||
        !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])) ||
        Number(m[4] ?? 0) > 23 ||
        Number(m[5] ?? 0) > 59 ||
        Number(m[6] ?? 0) > 59
      ) {
        throw bad('a datetime (YYYY-MM-DD HH:MM:SS)');
      }
      if (m[4] === undefined) return end ? `${text} 23:59:59.999999` : `${text} 00:00:00`;
      return formatDatetime(text);
    }
    case 'time': {
      const text = typeof value === 'string' ? value.trim() : '';
      const m = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?$/.exec(text);
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59)
        throw bad('a time (HH:MM:SS)');
      return storedTime(text);
    }
    default:
      if (typeof value === 'string') return noNul(value, label);
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      throw bad('text');
  }
}

/** Checks an operator and value against a column and returns the condition the builder emits; 400 when they do not fit. */
export function normalizeCondition(
  kind: ColumnKind,
  op: FilterOperator,
  value: unknown,
  label: string,
): NormalizedCondition {
  switch (op) {
    case '=':
    case '!=':
      if (value === null || value === undefined) return { op: 'is', value: op === '=' ? 'not set' : 'set' };
      return { op, value: coerceValue(kind, value, label) };
    case '>':
    case '<':
    case '>=':
    case '<=':
      return { op, value: coerceValue(kind, value, label) };
    case 'like':
    case 'not like':
      if (typeof value !== 'string' && typeof value !== 'number')
        throw new DataError(`filters: ${op} on ${label} needs a text pattern`);
      if (kind === 'integer' || kind === 'number' || kind === 'check')
        throw new DataError(`filters: ${op} is not supported on the number field ${label}`);
      return { op, value: literalTrailingEscape(noNul(String(value), label)) };
    case 'in':
    case 'not in': {
      const list =
        typeof value === 'string'
          ? value.split(',').map((v) => v.trim())
          : value === null || value === undefined
            ? []
            : value;
      if (!Array.isArray(list)) throw new DataError(`filters: ${op} on ${label} needs a list`);
      if (list.length > MAX_IN_VALUES)
        throw new DataError(`filters: ${op} takes at most ${MAX_IN_VALUES} values`);
      return { op, value: list.map((v) => coerceValue(kind, v, label)) };
    }
    case 'between': {
      if (!Array.isArray(value) || value.length !== 2)
        throw new DataError(`filters: between on ${label} needs [from, to]`);
      return { op, value: [coerceValue(kind, value[0], label), coerceValue(kind, value[1], label, true)] };
    }
    case 'timespan':
    case 'previous':
    case 'next': {
      if (kind !== 'date' && kind !== 'datetime')
        throw new DataError(`filters: ${op} needs a Date or Datetime field, not ${label}`);
      let span = value;
      if (op !== 'timespan') {
        const period = PERIODS[typeof value === 'string' ? value.trim().toLowerCase() : ''];
        if (!period)
          throw new DataError(
            `filters: ${op} takes one of ${Object.keys(PERIODS).join(', ')}; got ${clip(value)}`,
          );
        span = `${op === 'previous' ? 'last' : 'next'} ${period}`;
      }
      const [from, to] = timespanRange(span);
      return { op: 'between', value: [coerceValue(kind, from, label), coerceValue(kind, to, label, true)] };
    }
    case 'is': {
      const v = typeof value === 'string' ? value.trim().toLowerCase() : '';
      if (v !== 'set' && v !== 'not set')
        throw new DataError(`filters: 'is' takes 'set' or 'not set'; got ${clip(value)}`);
      return { op, value: v };
    }
    default: {
      const never: never = op;
      throw new DataError(`filters: unknown operator ${String(never)}`);
    }
  }
}
