// Request parameters as Frappe reads them: a JSON body wins over the query string; JSON values in queries are parsed.
import { parse } from 'node:querystring';
import { DataError } from '../errors/errors';
import type { AppContext } from './state';

/**
 * The query string's parameters, parsed once per request. node:querystring rather than Koa 3's `ctx.query`, which
 * builds a URLSearchParams and defines each key as a property: several times the cost, on every request. The object
 * has no prototype, so `__proto__` and friends are plain keys; no key limit (maxKeys 0), as Koa.
 */
export function queryParams(ctx: AppContext): Readonly<Record<string, string | string[] | undefined>> {
  return (ctx.state.query ??= parse(ctx.querystring, '&', '=', { maxKeys: 0 }));
}

/** Every request parameter: the JSON/form body when there is one, else the query string. */
export function requestParams(ctx: AppContext): Record<string, unknown> {
  const body = (ctx.request as { body?: unknown }).body;
  if (body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length > 0) return body as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(queryParams(ctx))) {
    if (Array.isArray(value)) throw new DataError(`Parameter ${key} was given more than once`);
    params[key] = value;
  }
  return params;
}

/** A parameter that may arrive as JSON text (query string) or as a JSON value (body). */
export function jsonParam(params: Record<string, unknown>, key: string): unknown {
  const value = params[key];
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!/^[[{"]/.test(trimmed)) return value;
  try {
    return JSON.parse(trimmed);
  } catch {
    throw new DataError(`Parameter ${key} is not valid JSON`);
  }
}

/** A non-negative integer parameter; refuses negative and non-integer values (400). */
export function intParam(params: Record<string, unknown>, key: string, fallback: number): number {
  const value = params[key];
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : /^\d+$/.test(String(value).trim()) ? Number(String(value).trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new DataError(`Parameter ${key} must be a non-negative integer`);
  return n;
}

/** A boolean parameter (`1`, `true`, `0`, `false`, or JSON booleans). */
export function boolParam(params: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = params[key];
  if (value === undefined || value === null || value === '') return fallback;
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false') return false;
  throw new DataError(`Parameter ${key} must be true or false`);
}
