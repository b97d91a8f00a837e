// The checks every method call passes before its arguments are read: verb, guest, OAuth scopes, rate limit.
import { assertScopes } from '../auth/scopes';
import { AuthenticationError, MethodNotAllowedError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { consumeRateLimit, type RateLimit } from './rate-limit';

/** What admission needs to know about a method. */
export interface Admission {
  methods: readonly string[];
  allowGuest: boolean;
  rateLimit?: RateLimit;
  scopes?: readonly string[];
}

/** Throws 405 (with Allow) for a verb outside the list, 401 for a Guest, 403 for a bearer token lacking a scope, 429 over the limit. */
export async function admitCall(ctx: AppContext, path: string, method: Admission): Promise<void> {
  if (!method.methods.includes(ctx.method)) {
    throw new MethodNotAllowedError(`${ctx.method} is not allowed for ${path}`, {
      headers: { Allow: method.methods.join(', ') },
    });
  }
  if (!method.allowGuest && ctx.state.user.name === 'Guest') throw new AuthenticationError('Login required');
  assertScopes(ctx.state, method.scopes);
  if (method.rateLimit) await consumeRateLimit(ctx, path, method.rateLimit);
}
