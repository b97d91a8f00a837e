// Request parameters as Frappe reads them: a JSON body wins over the query string; JSON values in queries are parsed.
import { parse, unescape } from 'node:querystring';
import { DataError } from '../errors/errors';
import type { AppContext } from './state';

/** The parsed query string: a key given more than once holds a list. */
export type QueryParams = Readonly<Record<string, string | string[] | undefined>>;

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** A `%XX` escape. */
const ESCAPE = /%[0-9a-fA-F]{2}/;
/** A pair with a plain key and an escaped value. */
const VALUE_ENCODED: [boolean, boolean] = [false, true];
/** A pair without `%`: neither part is decoded. */
const PLAIN_PAIR: [boolean, boolean] = [false, false];

/**
 * Which of a `key=value` pair's parts node:querystring decodes: a part is decoded only when its scanner saw a `%XX`
 * escape, and the scanner has quirks kept here exactly (a decode that fails falls back to a byte-wise unescape that
 * changes other characters too): a `+` breaks an escape in the key but is skipped in the value, and once the key is
 * known to be encoded, its later escapes count for the value.
 */
function encodedParts(pair: string, eq: number): [key: boolean, value: boolean] {
  // The common case, a plain key and a value with an escape, without the scan.
  if (eq >= 0 && pair.indexOf('%') > eq && ESCAPE.test(pair)) return VALUE_ENCODED;
  let key = false;
  let value = false;
  let seen = 0;
  const keyEnd = eq < 0 ? pair.length : eq;
  for (let i = 0; i < pair.length; i++) {
    if (i === keyEnd) {
      seen = 0;
      continue;
    }
    const code = pair.charCodeAt(i);
    if (i < keyEnd && !key) {
      if (code === 37) {
        seen = 1;
        continue;
      }
      if (seen > 0) {
        if (isHexDigit(code)) {
          if (++seen === 3) key = true;
          continue;
        }
        seen = 0;
      }
    }
    if (code === 43 || value) continue;
    if (code === 37) seen = 1;
    else if (seen > 0 && isHexDigit(code)) {
      if (++seen === 3) value = true;
    } else seen = 0;
  }
  return [key, value];
}

/** A raw key or value as node:querystring gives it: `+` is a space, and an encoded part is unescaped. */
function decodePart(raw: string, encoded: boolean): string {
  const spaced = raw.indexOf('+') >= 0 ? raw.replace(/\+/g, ' ') : raw;
  return encoded && spaced !== '' ? unescape(spaced) : spaced;
}

/**
 * Parses a query string exactly as node:querystring's `parse` does (no key limit), into a plain object: parse returns
 * a prototype-less object, which V8 keeps in dictionary mode (filling one costs ~6x a plain object's). A key that a plain
 * object would not hold as an own data property (`__proto__`, or a name Object.prototype has) takes the prototype-less
 * parse instead, so such keys stay plain keys and never read through to the prototype.
 */
export function parseQuery(query: string): QueryParams {
  const out: Record<string, string | string[]> = {};
  let start = 0;
  while (start < query.length) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    if (end > start) {
      const pair = query.slice(start, end);
      const eq = pair.indexOf('=');
      const [keyEncoded, valueEncoded] = pair.indexOf('%') >= 0 ? encodedParts(pair, eq) : PLAIN_PAIR;
      const key = decodePart(eq < 0 ? pair : pair.slice(0, eq), keyEncoded);
      if (key in out && !Object.prototype.hasOwnProperty.call(out, key))
        return parse(query, '&', '=', { maxKeys: 0 });
      const value = eq < 0 ? '' : decodePart(pair.slice(eq + 1), valueEncoded);
      const known = out[key];
      if (known === undefined) out[key] = value;
      else if (typeof known === 'string') out[key] = [known, value];
      else known.push(value);
    }
    start = end + 1;
  }
  return out;
}

/** The query string's parameters, parsed once per request (`parseQuery`; Koa 3's `ctx.query` costs several times more). */
export function queryParams(ctx: AppContext): QueryParams {
  return (ctx.state.query ??= parseQuery(ctx.querystring));
}

/** True for an object that is not an array (a JSON object, or a parsed form). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parsed body (koa-body types `ctx.request.body`) when it is a JSON object or a form; undefined otherwise. */
export function bodyObject(ctx: AppContext): Record<string, unknown> | undefined {
  const body = ctx.request.body;
  return isRecord(body) ? body : undefined;
}

/** Every request parameter: the JSON/form body when there is one, else the query string. */
export function requestParams(ctx: AppContext): Record<string, unknown> {
  const body = bodyObject(ctx);
  if (body && Object.keys(body).length > 0) return body;
  const params: Record<string, unknown> = {};
  const query = queryParams(ctx);
  for (const key of Object.keys(query)) {
    const value = query[key];
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
  const n =
    typeof value === 'number'
      ? value
      : /^\d+$/.test(String(value).trim())
        ? Number(String(value).trim())
        : NaN;
  if (!Number.isSafeInteger(n) || n < 0)
    throw new DataError(`Parameter ${key} must be a non-negative integer`);
  return n;
}

/** A required text argument of a method (a number is taken as its text): 400 naming it when missing or not text. */
export function textArgument(params: Record<string, unknown>, key: string): string {
  const value = params[key];
  if (value === undefined || value === null || value === '') throw new DataError(`Missing argument: ${key}`);
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new DataError(`Argument ${key}: must be a string`);
  return String(value);
}

/** A boolean parameter (`1`, `true`, `0`, `false` in any case, as Python clients send `True`; or JSON booleans). */
export function boolParam(params: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = params[key];
  if (value === undefined || value === null || value === '') return fallback;
  const word = typeof value === 'string' ? value.toLowerCase() : value;
  if (word === true || word === 1 || word === '1' || word === 'true') return true;
  if (word === false || word === 0 || word === '0' || word === 'false') return false;
  throw new DataError(`Parameter ${key} must be true or false`);
}
