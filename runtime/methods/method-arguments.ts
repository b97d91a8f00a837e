// A method's arguments from the request: query parameters (GET), JSON or form body; JSON text parsed where the
// argument is structured; then the generated validator coerces, checks and strips them. Never `ignore_permissions`/`flags`.
import { DataError } from '../errors/errors';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { BodyValidator } from '../registry/registry';

/** Request keys that never reach a method: permission switches, the CSRF token, Frappe's routing and cache keys. */
const NEVER_PASSED = new Set([
  'ignore_permissions',
  'flags',
  'csrf_token',
  'cmd',
  '_',
  '__proto__',
  'constructor',
  'prototype',
]);

function describe(error: NonNullable<BodyValidator['errors']>[number]): string {
  if (error.keyword === 'required') return `Missing argument: ${String(error.params?.missingProperty ?? '')}`;
  const where = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'arguments';
  if (error.keyword === 'enum') {
    return `Argument ${where}: must be one of ${((error.params?.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `Argument ${where}: ${error.message ?? 'is invalid'}`;
}

/** Copies the request's parameters a method may see into a fresh object, parsing JSON text for structured arguments. */
export function rawArguments(
  params: Record<string, unknown>,
  jsonArgs: readonly string[],
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const key of Object.keys(params)) {
    if (NEVER_PASSED.has(key)) continue;
    let value = params[key];
    if (typeof value === 'string' && jsonArgs.includes(key) && /^\s*[[{"]/.test(value)) {
      try {
        value = JSON.parse(value);
      } catch {
        throw new DataError(`Argument ${key}: is not valid JSON`);
      }
    }
    args[key] = value;
  }
  return args;
}

/** Validates `args` with a generated validator (coercing in place, dropping unknown keys); 400 naming each bad argument. */
export function checkArguments(
  validate: BodyValidator,
  args: Record<string, unknown>,
): Record<string, unknown> {
  if (!validate(args)) throw new DataError([...new Set((validate.errors ?? []).map(describe))].join('; '));
  return args;
}

/** The validated arguments of the request for a method with `validate` and `jsonArgs`. */
export function methodArguments(
  ctx: AppContext,
  validate: BodyValidator,
  jsonArgs: readonly string[],
): Record<string, unknown> {
  return checkArguments(validate, rawArguments(requestParams(ctx), jsonArgs));
}
