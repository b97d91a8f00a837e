// The async threshold of bulk requests (SPEC 8): site config `bulk_operation_async_threshold`, an integer or a map per
// DocType where `*` stands for every DocType not named; default 20. A request is queued when it has strictly more items.
import type { SiteConfig } from '../config/config';

/** The default threshold (SPEC 8). */
export const DEFAULT_ASYNC_THRESHOLD = 20;

/** An integer as Frappe's cint reads it: junk is 0. */
function cint(value: unknown): number {
  const n = Math.trunc(Number(value));
  return Number.isFinite(n) ? n : 0;
}

/** The threshold for a DocType's bulk endpoint, or for the cross-DocType endpoints (`doctype` undefined: `*`). */
export function asyncThreshold(
  config: Pick<SiteConfig, 'bulk_operation_async_threshold'>,
  doctype?: string,
): number {
  const value: unknown = config.bulk_operation_async_threshold;
  if (value === undefined || value === null) return DEFAULT_ASYNC_THRESHOLD;
  if (typeof value !== 'object' || Array.isArray(value)) return cint(value);
  const map = value as Record<string, unknown>;
  const own = doctype !== undefined && Object.hasOwn(map, doctype) ? map[doctype] : undefined;
  const picked = own ?? (Object.hasOwn(map, '*') ? map['*'] : undefined);
  return picked === undefined ? DEFAULT_ASYNC_THRESHOLD : cint(picked);
}
