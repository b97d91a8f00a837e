// GET /api/v2/events?doctype=D[&name=N]: the server-sent events of a DocType or a document (runtime/events), resumed
// after `Last-Event-ID` (header) or `last_event_id` (query). The parameters are checked here; the stream answers itself.
import { DataError } from '../errors/errors';
import { clientIp } from '../auth/client-ip';
import { openEventStream } from '../events/event-stream';
import { connectionKey, stillHolds } from '../events/realtime-connections';
import { callerOf } from '../http/caller-of';
import { queryParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { RequestAuthenticator } from '../middleware/authenticate';

const EVENT_ID = /^\d{1,16}$/;

/** One query parameter as a string (absent: undefined); repeated or over-long is a 400. */
function single(ctx: AppContext, key: string): string | undefined {
  const value = queryParams(ctx)[key];
  if (Array.isArray(value)) throw new DataError(`Parameter ${key} was given more than once`);
  if (value !== undefined && value.length > 140) throw new DataError(`Parameter ${key} is too long`);
  return value === '' ? undefined : value;
}

/**
 * The handler opening the event stream the query asks for. The stream checks its credentials again now and then
 * (`authenticateAgain`): a session logged out, a token revoked or a key regenerated since ends it.
 */
export function createEventStream(authenticateAgain: RequestAuthenticator) {
  return async function eventStream(ctx: AppContext): Promise<void> {
    const doctype = single(ctx, 'doctype');
    if (doctype === undefined) throw new DataError('Parameter doctype is required');
    const name = single(ctx, 'name');
    const header = ctx.get('last-event-id');
    const last = header !== '' ? header : single(ctx, 'last_event_id');
    if (last !== undefined && !(EVENT_ID.test(last) && Number.isSafeInteger(Number(last))))
      throw new DataError('Last-Event-ID must be an event id (a whole number)');
    const caller = callerOf(ctx);
    const stillSignedIn = () =>
      authenticateAgain(caller.site, ctx.req).then((user) => user.name === caller.user.name, stillHolds);
    // The stream writes the response itself, for as long as the client stays.
    ctx.respond = false;
    try {
      await openEventStream(
        caller.site,
        caller.user,
        {
          doctype,
          ...(name !== undefined ? { name } : {}),
          ...(last !== undefined ? { lastEventId: Number(last) } : {}),
        },
        ctx.res,
        { stillSignedIn, connection: connectionKey(caller.user, clientIp(ctx)) },
      );
    } catch (err) {
      // Refused before anything was written: the error handler answers as for any request.
      ctx.respond = true;
      throw err;
    }
  };
}
