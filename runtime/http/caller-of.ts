// The caller of a request: what an HTTP handler hands to an operation (runtime/document/caller.ts).
import type { Caller } from '../document/caller';
import type { AppContext } from './state';

/** The caller of a request's operation: its site, user and API version. */
export function callerOf(ctx: AppContext): Caller {
  return { site: ctx.state.site, user: ctx.state.user, version: ctx.state.version };
}
