// The time limit of list and count reads on every backend (site config max_query_time), and the error past it.
import { QueryTimeoutError } from '../errors/errors';

/** The default of site config max_query_time (ms). */
export const DEFAULT_MAX_QUERY_TIME = 5000;

/** The time limit of a read, from site config max_query_time (ms; a missing or invalid value is the default). */
export function queryTimeLimit(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? Math.min(Math.ceil(value), 2_147_483_647)
    : DEFAULT_MAX_QUERY_TIME;
}

/** The error of a read cancelled at its time limit. */
export function queryTimeout(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `The query took longer than max_query_time (${limitMs} ms) and was cancelled: narrow its filters, filter on an indexed field, or page with cursor instead of start`,
  );
}
