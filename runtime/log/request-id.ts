// Request ids: the client's `X-Request-Id` when it is a sane token (a load balancer's or a caller's trace id), else one
// made here; echoed on the answer and carried by every log line of the request (`req_id`), so one id finds a request
// in the proxy's log, this service's log and the client's.
import { randomUUID } from 'node:crypto';

/** The header a request id comes in and goes out in. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * What is taken from a client: 1 to 128 characters of letters, digits and `-_.:@/+=` (UUIDs, W3C trace ids, AWS's
 * `Root=1-…`, base64). Anything else (spaces, quotes, control or non-ASCII characters, JSON) is replaced, so a log
 * line never carries text a client shaped to look like something else.
 */
const SANE = /^[A-Za-z0-9\-_.:@/+=]{1,128}$/;

/** The request id for a header value: the value when sane, else a new UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE.test(header) ? header : randomUUID();
}
