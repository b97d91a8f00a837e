// One HTTP request of a webhook: to the address vetUrl checked (the host name is used for Host and TLS, never resolved
// again), with a deadline over the whole exchange, redirects not followed, and at most RESPONSE_LIMIT bytes of the
// answer kept for the log.
import http, { type Agent } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { VettedUrl } from './vet-url';

/** Bytes of a response body kept in the Webhook Request Log. */
export const RESPONSE_LIMIT = 64 * 1024;

/** How one request ended: the status and the start of the body, or the error that stopped it. */
export type SendOutcome =
  { ok: boolean; status: number; body: string; location?: string } | { ok: false; error: string };

/**
 * Sends `body` with `method` and `headers` to the vetted URL; never rejects. `timeoutMs` bounds the whole exchange.
 * `agent` keeps plain-HTTP connections alive between attempts (TLS ones are made per request).
 */
export function sendRequest(
  target: VettedUrl,
  method: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  agent?: Agent,
): Promise<SendOutcome> {
  const { url, address, family } = target;
  // The checked address, whatever the name resolves to now (no DNS rebinding between the check and the connect).
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = client.request(
      url,
      {
        method,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        // A kept-alive connection was made to an address checked then; `lookup` answers for a new one.
        agent: url.protocol === 'https:' ? false : (agent ?? false),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_LIMIT) {
            chunks.push(chunk.subarray(0, RESPONSE_LIMIT - kept));
            kept += chunk.length;
          }
        });
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const location = response.headers.location;
          finish({
            ok: status >= 200 && status < 300,
            status,
            body: Buffer.concat(chunks).toString('utf8'),
            ...(location ? { location } : {}),
          });
        });
        response.on('error', (err) => finish({ ok: false, error: err.message }));
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, error: `No answer within ${timeoutMs / 1000} s` });
      request.destroy();
    }, timeoutMs);
    request.on('error', (err) => finish({ ok: false, error: err.message }));
    request.end(body);
  });
}
