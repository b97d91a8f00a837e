// When a Scheduler Event script is due: its `event_frequency` as a cron expression (Frappe's CRON_MAP: Hourly is
// "0 * * * *", Daily "0 0 * * *", Weekly "0 0 * * 0", Monthly "0 0 1 * *", Yearly "0 0 1 1 *", All every
// `scheduler_interval` seconds rounded to minutes, Cron the script's own `cron_format`), and the latest occurrence at
// or before a moment, read in the site's `time_zone` (default UTC, the zone stored datetimes are in).
import type * as CronParser from 'cron-parser';
import { ValidationError } from '../errors/errors';

/** The frequencies a Scheduler Event script may name (the Server Script DocType's options). */
export const EVENT_FREQUENCIES = ['All', 'Hourly', 'Daily', 'Weekly', 'Monthly', 'Yearly', 'Cron'] as const;

/** Frappe's default scheduler interval in seconds: how often `All` scripts run. */
export const DEFAULT_SCHEDULER_INTERVAL = 240;

const FIXED: Record<string, string> = {
  Hourly: '0 * * * *',
  Daily: '0 0 * * *',
  Weekly: '0 0 * * 0',
  Monthly: '0 0 1 * *',
  Yearly: '0 0 1 1 *',
};

/** Longest cron text accepted (the field is a Data field; anything longer is not a cron expression). */
const MAX_CRON_LENGTH = 100;

/**
 * Parses a five-field cron expression (minute hour day-of-month month day-of-week) in `timeZone`; anything else is a
 * 400 naming the problem. Seconds fields, `@reboot`-style macros and names outside the standard set are refused.
 */
function parseCron(expression: string, timeZone: string, currentDate?: Date) {
  const text = expression.trim();
  if (!text) throw new ValidationError('Cron Format is mandatory when Event Frequency is Cron');
  if (text.length > MAX_CRON_LENGTH || text.split(/\s+/).length !== 5)
    throw new ValidationError(
      `Cron Format must have five fields (minute hour day-of-month month day-of-week), got "${text.slice(0, MAX_CRON_LENGTH)}"`,
    );
  try {
    // cron-parser (and luxon beneath it) is loaded when a schedule is first read, not by every process.
    const { CronExpressionParser } = require('cron-parser') as typeof CronParser;
    return CronExpressionParser.parse(text, { tz: timeZone, ...(currentDate ? { currentDate } : {}) });
  } catch (err) {
    throw new ValidationError(
      `Cron Format "${text}" is not a valid cron expression: ${(err as Error).message}`,
    );
  }
}

/** The cron expression of a frequency (`cronFormat` for Cron); an unknown frequency or a bad expression is a 400. */
export function cronOf(frequency: string, cronFormat: string | undefined, intervalSeconds: number): string {
  if (frequency === 'Cron') return (cronFormat ?? '').trim();
  if (frequency === 'All') {
    const minutes = Math.min(59, Math.max(1, Math.round(intervalSeconds / 60)));
    return `*/${minutes} * * * *`;
  }
  const fixed = FIXED[frequency];
  if (!fixed) throw new ValidationError(`Event Frequency must be one of: ${EVENT_FREQUENCIES.join(', ')}`);
  return fixed;
}

/** Throws a 400 unless the frequency (and, for Cron, its expression) can be scheduled. */
export function assertSchedulable(frequency: unknown, cronFormat: unknown, timeZone: string): void {
  if (typeof frequency !== 'string' || !(EVENT_FREQUENCIES as readonly string[]).includes(frequency))
    throw new ValidationError(`Event Frequency must be one of: ${EVENT_FREQUENCIES.join(', ')}`);
  if (frequency === 'Cron') parseCron(typeof cronFormat === 'string' ? cronFormat : '', timeZone);
}

/** The latest occurrence of `expression` at or before `now` (ms since the epoch), in `timeZone`. */
export function latestOccurrence(expression: string, now: number, timeZone: string): number {
  // prev() answers the occurrence strictly before its current date: start just after `now` so `now` itself counts.
  return parseCron(expression, timeZone, new Date(now + 1))
    .prev()
    .getTime();
}
