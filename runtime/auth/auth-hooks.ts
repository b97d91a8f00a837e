// Auth hooks: app-provided handlers (`authHooks` exported by `doctypes/hooks.ts`) that may name the request's user.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** What an auth hook sees of the request (read-only). */
export interface AuthHookRequest {
  /** Request headers, lower-cased names. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  method: string;
  path: string;
  /** The client address (trusted-proxy aware). */
  ip: string;
  /** The user the built-in methods resolved (`Guest` when none did). */
  user: string;
}

/**
 * An auth hook: returns the name of the user the request runs as, or undefined to leave it unchanged. Throwing
 * refuses the request with 401. Hooks run in order after the built-in methods; the first one naming a user wins.
 */
export type AuthHook = (request: AuthHookRequest) => string | undefined | Promise<string | undefined>;

/** Loads `authHooks` from `<dir>/hooks.ts` (or `.js`); no file gives no hooks, a malformed export fails at start. */
export function loadAuthHooks(dir = process.env.SVC_DOCTYPES ?? 'doctypes'): AuthHook[] {
  const file = ['hooks.ts', 'hooks.js'].map((name) => path.resolve(dir, name)).find((f) => existsSync(f));
  if (!file) return [];
  const mod = require(file) as { authHooks?: unknown };
  if (mod.authHooks === undefined) return [];
  if (!Array.isArray(mod.authHooks) || !mod.authHooks.every((h) => typeof h === 'function')) {
    throw new Error(`${file}: authHooks must be an array of functions`);
  }
  return mod.authHooks as AuthHook[];
}
