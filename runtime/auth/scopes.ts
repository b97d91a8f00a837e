// OAuth scopes: what a bearer token may reach. Every endpoint and method requires `all` unless it declares otherwise.
import { InsufficientScopeError } from '../errors/errors';
import type { RequestState } from '../http/state';

/** The scope Frappe requires by default; a token holding it holds every scope. */
export const DEFAULT_SCOPES: readonly string[] = ['all'];

/** Splits a stored scope list (space-delimited, as OAuth sends it; commas tolerated) into scope names. */
export function parseScopes(stored: unknown): string[] {
  return String(stored ?? '')
    .split(/[\s,]+/)
    .filter(Boolean);
}

/** Under bearer authentication, refuses (403 insufficient_scope) a token lacking any `required` scope; no-op otherwise. */
export function assertScopes(state: RequestState, required: readonly string[] = DEFAULT_SCOPES): void {
  if (state.auth !== 'bearer') return;
  const held = state.scopes ?? [];
  if (held.includes('all')) return;
  const missing = required.filter((scope) => !held.includes(scope));
  if (missing.length === 0) return;
  const scope = required.join(' ').replace(/["\\]/g, '');
  throw new InsufficientScopeError(`The access token lacks the scope ${missing.join(', ')}`, {
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });
}
