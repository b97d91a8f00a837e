// One HTTP request of a webhook: to the address vetUrl checked (the host name is used for Host and TLS, never resolved
// again: receiver-pools.ts), with a deadline over the whole exchange, redirects not followed, and at most
// RESPONSE_LIMIT bytes of the answer kept for the log.
import type { ReceiverPools } from './receiver-pools';
import type { VettedUrl } from './vet-url';

/** Bytes of a response body kept in the Webhook Request Log. */
export const RESPONSE_LIMIT = 64 * 1024;

/** The longest timeout a webhook may have, in seconds (checked when it is saved). */
export const MAX_TIMEOUT_S = 300;

/** How one request ended: the status and the start of the body, or the error that stopped it. */
export type SendOutcome =
  { ok: boolean; status: number; body: string; location?: string } | { ok: false; error: string };

/** The message of a failure: undici wraps a connection's error (ECONNREFUSED ...) as its `cause`. */
function errorText(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Sends `body` with `method` and `headers` to the vetted URL over a kept-alive connection of `pools`; never rejects.
 * `timeoutMs` bounds the whole exchange, the answer's body included.
 */
export async function sendRequest(
  target: VettedUrl,
  method: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  pools: ReceiverPools,
): Promise<SendOutcome> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const response = await pools.pool(target).request({
      path: `${target.url.pathname}${target.url.search}`,
      method: method as 'POST',
      headers,
      body,
      signal: deadline.signal,
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    // The rest of a long answer is read and dropped, so that its connection can be used again.
    for await (const chunk of response.body as AsyncIterable<Buffer>)
      if (kept < RESPONSE_LIMIT) {
        chunks.push(chunk.subarray(0, RESPONSE_LIMIT - kept));
        kept += chunk.length;
      }
    const status = response.statusCode;
    const location = response.headers.location;
    return {
      ok: status >= 200 && status < 300,
      status,
      body: Buffer.concat(chunks).toString('utf8'),
      ...(location ? { location: String(location) } : {}),
    };
  } catch (err) {
    if (deadline.signal.aborted) return { ok: false, error: `No answer within ${timeoutMs / 1000} s` };
    return { ok: false, error: errorText(err) };
  } finally {
    clearTimeout(timer);
  }
}
