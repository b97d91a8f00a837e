// Jobs yield to requests: a job running in the service's own process (the embedded worker, or `svc serve
// --with-worker`) shares its event loop and its SQLite connection with the requests. While requests are arriving, a
// job waits after each batch of items for a multiple of the time the batch took, so it takes at most about a ninth of
// the process; with no request in flight it runs at full speed (a client polling the job's status now and then does
// not slow it).
import { setTimeout as sleep } from 'node:timers/promises';

/** Requests being handled now, and when the last one ended (ms since epoch); kept by the app's first middleware. */
let inFlight = 0;
let lastEndedAt = 0;

/** Requests at once that make the process busy (one client polling a job's status does not). */
const BUSY_IN_FLIGHT = 2;
/** A request that ended this recently still counts (the next one of a busy client is on its way). */
const RECENT_MS = 5;
/** While busy, a job waits this many times as long as its last batch took (a job's share is about 1 / (1 + this)). */
const YIELD_FACTOR = 8;
/** The longest wait between two batches. */
const MAX_WAIT_MS = 500;

/** Counts a request from its start to the end of its handling (the app's first middleware calls it). */
export function trackRequest(next: () => Promise<unknown>): Promise<unknown> {
  inFlight++;
  return next().finally(() => {
    inFlight--;
    lastEndedAt = Date.now();
  });
}

/** Called by a job between two batches of items, with how long the last batch took (ms). */
export async function yieldToRequests(batchMs: number): Promise<void> {
  if (inFlight < BUSY_IN_FLIGHT && Date.now() - lastEndedAt > RECENT_MS) return;
  await sleep(Math.min(MAX_WAIT_MS, Math.max(1, batchMs * YIELD_FACTOR)));
}
