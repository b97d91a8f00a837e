// Frappe's `timespan` filter values (`today`, `last 7 days`, `this quarter`, ...) as inclusive date ranges.
import { DataError } from '../errors/errors';
import { today } from '../db/stored-values';
import { clip } from './tokenize';

/** Every timespan Frappe lists. */
export const TIMESPANS = [
  'last 7 days',
  'last 14 days',
  'last 30 days',
  'last week',
  'last month',
  'last quarter',
  'last 6 months',
  'last year',
  'yesterday',
  'today',
  'tomorrow',
  'this week',
  'this month',
  'this quarter',
  'this year',
  'next 7 days',
  'next 14 days',
  'next 30 days',
  'next week',
  'next month',
  'next quarter',
  'next 6 months',
  'next year',
] as const;

const iso = (d: Date) => d.toISOString().slice(0, 10);
const day = (y: number, m: number, d: number) => new Date(Date.UTC(y, m, d));
const addDays = (d: Date, n: number) => day(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + n);
/** Months `from` .. `to` (inclusive) relative to the month of `d`, as first and last day. */
const months = (d: Date, from: number, to: number): [Date, Date] => [
  day(d.getUTCFullYear(), d.getUTCMonth() + from, 1),
  day(d.getUTCFullYear(), d.getUTCMonth() + to + 1, 0),
];
/** The week (Monday to Sunday) `offset` weeks from the week of `d`. */
const week = (d: Date, offset: number): [Date, Date] => {
  const monday = addDays(d, -((d.getUTCDay() + 6) % 7) + 7 * offset);
  return [monday, addDays(monday, 6)];
};
const quarter = (d: Date, offset: number): [Date, Date] => {
  const first = Math.floor(d.getUTCMonth() / 3) * 3 - d.getUTCMonth() + 3 * offset;
  return months(d, first, first + 2);
};
const year = (d: Date, offset: number): [Date, Date] => [
  day(d.getUTCFullYear() + offset, 0, 1),
  day(d.getUTCFullYear() + offset, 11, 31),
];

/** The inclusive `[from, to]` dates (YYYY-MM-DD) of a timespan, relative to `now` (today, UTC, by default). */
export function timespanRange(value: unknown, now: string = today()): [string, string] {
  const span = typeof value === 'string' ? value.trim().toLowerCase() : '';
  const d = new Date(`${now}T00:00:00Z`);
  const range = (r: [Date, Date]): [string, string] => [iso(r[0]), iso(r[1])];
  switch (span as (typeof TIMESPANS)[number]) {
    case 'today':
      return range([d, d]);
    case 'yesterday':
      return range([addDays(d, -1), addDays(d, -1)]);
    case 'tomorrow':
      return range([addDays(d, 1), addDays(d, 1)]);
    case 'last 7 days':
      return range([addDays(d, -7), d]);
    case 'last 14 days':
      return range([addDays(d, -14), d]);
    case 'last 30 days':
      return range([addDays(d, -30), d]);
    case 'next 7 days':
      return range([d, addDays(d, 7)]);
    case 'next 14 days':
      return range([d, addDays(d, 14)]);
    case 'next 30 days':
      return range([d, addDays(d, 30)]);
    case 'last week':
      return range(week(d, -1));
    case 'this week':
      return range(week(d, 0));
    case 'next week':
      return range(week(d, 1));
    case 'last month':
      return range(months(d, -1, -1));
    case 'this month':
      return range(months(d, 0, 0));
    case 'next month':
      return range(months(d, 1, 1));
    case 'last quarter':
      return range(quarter(d, -1));
    case 'this quarter':
      return range(quarter(d, 0));
    case 'next quarter':
      return range(quarter(d, 1));
    case 'last 6 months':
      return range(months(d, -6, -1));
    case 'next 6 months':
      return range(months(d, 1, 6));
    case 'last year':
      return range(year(d, -1));
    case 'this year':
      return range(year(d, 0));
    case 'next year':
      return range(year(d, 1));
    default:
      throw new DataError(`filters: timespan must be one of ${TIMESPANS.join(', ')}; got "${clip(value)}"`);
  }
}
