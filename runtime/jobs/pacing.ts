// Jobs yield to requests: a job running in the service's own process (the embedded worker, or `svc serve
// --with-worker`) shares its event loop and its SQLite connection with the requests. While requests are arriving, a
// job waits after each batch of items for a multiple of the time the batch took, so it takes at most about a ninth of
// the process; with no request in flight it runs at full speed. A client polling the job's status does not slow it:
// busy means two requests in flight, or requests arriving at 100 a second or more since the job's last batch. (A
// request that had ended within 5 ms used to count as busy too; a client polling every 50 ms then put the job to sleep
// for eight batches about one batch in ten, 10-15% of a bulk job's time with nothing else running.)
import { setTimeout as sleep } from 'node:timers/promises';

/** Requests being handled now, and requests started since the process started; kept by the app's first middleware. */
let inFlight = 0;
let started = 0;

/** Requests at once that make the process busy (one client polling a job's status does not). */
const BUSY_IN_FLIGHT = 2;
/** Requests started since the last batch that make the process busy, when they came at BUSY_PER_SECOND or more. */
const BUSY_STARTED = 2;
const BUSY_PER_SECOND = 100;
/** While busy, a job waits this many times as long as its last batch took (a job's share is about 1 / (1 + this)). */
const YIELD_FACTOR = 8;
/** The longest wait between two batches. */
const MAX_WAIT_MS = 500;

/** Counts a request from its start to the end of its handling (the app's first middleware calls it). */
export function trackRequest(next: () => Promise<unknown>): Promise<unknown> {
  inFlight++;
  started++;
  return next().finally(() => {
    inFlight--;
  });
}

/**
 * The pacing of one job: called between two batches of items with how long the last batch took (ms), it goes on at
 * once unless requests are keeping the process busy, and then waits YIELD_FACTOR times the batch.
 */
export function requestPacer(): (batchMs: number) => Promise<void> {
  let seen = started;
  let since = Date.now();
  return async (batchMs) => {
    const now = Date.now();
    const arrived = started - seen;
    const busy =
      inFlight >= BUSY_IN_FLIGHT ||
      (arrived >= BUSY_STARTED && arrived * 1000 >= BUSY_PER_SECOND * Math.max(1, now - since));
    // Requests that arrive while the job waits count toward the next batch's decision.
    seen = started;
    since = now;
    if (busy) await sleep(Math.min(MAX_WAIT_MS, Math.max(1, batchMs * YIELD_FACTOR)));
  };
}
