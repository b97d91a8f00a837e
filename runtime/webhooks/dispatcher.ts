// Hands due log rows to the background jobs. A save's rows are queued by the process that committed them, right after
// the commit (one job per FLUSH_MS, whatever the number of rows). Every process that runs a job worker
// also looks for due rows every TICK_MS (and at the moment of a retry it queued itself): retries, and rows whose job
// was never queued (a crash between the commit and the enqueue, Redis down) once their lease has run out. A row is
// claimed by moving its `next_retry` past LEASE_MS, so two processes never queue it together.
import { inWriteTransaction } from '../db/write-transaction';
import { jobQueueOf, registerJobKind, type JobRun } from '../jobs/job-queue';
import { ADMINISTRATOR, SitePlugin, type Site } from '../site';
import { deliverLogRows } from './deliver';
import { ReceiverPools } from './receiver-pools';
import { LEASE_MS, LOG_TABLE, datetimeAt, datetimeNow } from './request-log';

/** The kind name of delivery jobs. */
export const WEBHOOK_JOB = 'webhook';

/** How often a worker process looks for due rows. */
const TICK_MS = 5000;

/** How long the rows of committed saves gather before their job is queued (one job, one claim, one record). */
const FLUSH_MS = 50;

/** Rows claimed per look. */
const BATCH = 500;

interface DispatchState {
  /** Rows committed by this process whose job is not queued yet. */
  pending: string[];
  flushing: boolean;
  /** Kept-alive connections to receivers, for this process's attempts. */
  pools: ReceiverPools;
  timer?: NodeJS.Timeout;
  wake?: NodeJS.Timeout;
  wakeAt?: number;
}

/** The site's dispatcher in this process. */
export const DISPATCHER = new SitePlugin<DispatchState>(
  'webhook dispatcher',
  () => ({ pending: [], flushing: false, pools: new ReceiverPools() }),
  async (state) => {
    clearInterval(state.timer);
    clearTimeout(state.wake);
    state.timer = undefined;
    await state.pools.close();
  },
);

/** What a delivery job carries: the log rows to attempt. */
export interface DeliveryPayload {
  logs: string[];
}

/** The `next_retry` a claim gives a row: past the lease. */
export function leaseUntil(): string {
  return datetimeAt(Date.now() + LEASE_MS);
}

/** Queues one job for `logs`; a failure leaves them to the dispatcher (their lease runs out). */
async function enqueue(site: Site, logs: string[]): Promise<void> {
  const jobs = jobQueueOf(site);
  if (!logs.length || !jobs) return;
  const payload: DeliveryPayload = { logs };
  await jobs.enqueue(WEBHOOK_JOB, ADMINISTRATOR, payload, logs.length).catch(() => undefined);
}

/** Queues the delivery of rows committed just now (claimed when inserted): one job per FLUSH_MS. */
export function queueDelivery(site: Site, logs: readonly string[]): void {
  const state = DISPATCHER.of(site);
  state.pending.push(...logs);
  if (state.flushing) return;
  state.flushing = true;
  setTimeout(() => {
    state.flushing = false;
    void enqueue(site, state.pending.splice(0));
  }, FLUSH_MS).unref();
}

/** Claims the due Queued rows (at most BATCH) and queues a job for them; returns their names. */
export async function dispatchDue(site: Site): Promise<string[]> {
  const nowText = datetimeNow();
  const due = (await site.db
    .knex(LOG_TABLE)
    .where({ status: 'Queued' })
    .andWhere('next_retry', '<=', nowText)
    .orderBy('next_retry')
    .limit(BATCH)
    .select('name')) as { name: string }[];
  if (!due.length) return [];
  const lease = leaseUntil();
  const claimed = await inWriteTransaction(site.db, async (q) => {
    const mine: string[] = [];
    for (const { name } of due) {
      const n = await q(LOG_TABLE)
        .where({ name, status: 'Queued' })
        .andWhere('next_retry', '<=', nowText)
        .update({ next_retry: lease });
      if (n === 1) mine.push(name);
    }
    return mine;
  });
  await enqueue(site, claimed);
  return claimed;
}

/** Looks for due rows at `at` (ms) in this process, if its dispatcher runs and looks no sooner already. */
export function wakeAt(site: Site, at: number): void {
  const state = DISPATCHER.peek(site);
  if (!state?.timer) return;
  if (state.wakeAt !== undefined && state.wakeAt <= at) return;
  clearTimeout(state.wake);
  state.wakeAt = at;
  state.wake = setTimeout(
    () => {
      state.wakeAt = undefined;
      state.wake = undefined;
      void dispatchDue(site).catch(() => undefined);
    },
    Math.max(0, at - Date.now()) + 1000,
  );
  state.wake.unref();
}

/** Starts looking for due rows in this process (a process that runs the site's job worker). */
export function startWebhookDispatcher(site: Site): void {
  const state = DISPATCHER.of(site);
  if (state.timer) return;
  state.timer = setInterval(() => void dispatchDue(site).catch(() => undefined), TICK_MS);
  state.timer.unref();
  void dispatchDue(site).catch(() => undefined);
}

/**
 * Runs a delivery job: the attempts of its rows (deliver.ts). Returns how many rows ended in each status. A worker
 * that shuts down starts no more attempts: the job records those under way and gives the rest back, due now, for the
 * next look of any process (not ten minutes later, when their claim runs out).
 */
export async function runDeliveryJob(run: JobRun): Promise<unknown> {
  const { logs } = run.payload as DeliveryPayload;
  const site = run.site;
  return deliverLogRows(site, logs, DISPATCHER.of(site).pools, (at) => wakeAt(site, at), {
    stopping: () => run.items.stopping(),
  });
}

registerJobKind(WEBHOOK_JOB, runDeliveryJob);
