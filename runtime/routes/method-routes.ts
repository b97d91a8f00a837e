// Method endpoints: /api/method/{name} (v1, `message`) and /api/v2/method/{name} (v2, `data`).
import { AuthenticationError, DoesNotExistError, MethodNotAllowedError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { BUILTIN_METHODS } from '../methods/builtins';
import { respond } from './resource-handlers';

/** Calls a method by name: unknown → 404, wrong verb → 405 with Allow, guest without allowGuest → 401. */
export async function callMethod(ctx: AppContext, name: string): Promise<void> {
  const method = BUILTIN_METHODS.get(name.replace(/\/+$/, ''));
  if (!method) throw new DoesNotExistError(`Method ${name.slice(0, 140)} not found`);
  if (!method.methods.includes(ctx.method)) {
    throw new MethodNotAllowedError(`${ctx.method} is not allowed for ${name}`, { headers: { Allow: method.methods.join(', ') } });
  }
  if (!method.allowGuest && ctx.state.user.name === 'Guest') throw new AuthenticationError('Login required');
  const result = await method.handler(ctx);
  if (method.raw) {
    ctx.status = 200;
    ctx.body = result;
    return;
  }
  if (result === undefined) {
    ctx.status = 200;
    ctx.body = {};
    return;
  }
  respond(ctx, 200, ctx.state.version === 2 ? 'data' : 'message', result, ctx.state.messages);
}
