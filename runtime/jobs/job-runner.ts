// What every backend does to run one job: load the user it runs as (as of now), hand its handler the payload and the
// item store, and say how it ended. The per-item outcomes always live in the site database (__JobItem rows, or the
// kind's own store: an import's log rows), written in the transaction of the item's own write, whichever backend (the
// jobs table or BullMQ on Redis) holds the job itself: that is what makes an item's outcome single even when two
// workers briefly run the same job.
import type { Knex } from 'knex';
import { loadUser } from '../auth/users';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import { AppError, AuthenticationError } from '../errors/errors';
import type { Site } from '../site';
import { jobHandler, jobItemStore, type ItemStore, type JobItems, type StoredJob } from './job-queue';

const ITEMS = SYSTEM_TABLES.jobItems;
/** The key of an item's outcome. */
const ITEM_KEY = ['job', 'idx'] as const;

/** A job as a worker picks it up: its id, kind, the user it runs as and its payload (as enqueued). */
export interface ClaimedJob extends StoredJob {
  kind: string;
}

/** The default item store: a __JobItem row per item outcome, keyed by the job and the item's index. */
function jobItemRows(site: Site, id: string): ItemStore {
  return {
    outcomes: async () => {
      const rows = (await site.db.knex(ITEMS).where({ job: id }).select('idx', 'outcome')) as {
        idx: unknown;
        outcome: string;
      }[];
      return new Map(rows.map((r) => [Number(r.idx), JSON.parse(r.outcome) as unknown]));
    },
    count: async () => {
      const counted = (await site.db.knex(ITEMS).where({ job: id }).count({ n: '*' }).first()) as {
        n: unknown;
      };
      return Number(counted.n);
    },
    recordIn: async (trx, index, outcome) => {
      const row = { job: id, idx: index, outcome: JSON.stringify(outcome) };
      // Through the row store: on SQLite a knex insert cost ~40 us per item (query building, and better-sqlite3
      // preparing its text again each time), a third of a bulk insert's item.
      await site.rows.insertRows(trx, ITEMS, [row]);
    },
    recordOnce: (q, index, outcome) =>
      site.rows.insertRowOnce(q, ITEMS, { job: id, idx: index, outcome: JSON.stringify(outcome) }, ITEM_KEY),
    release: async (q) => {
      await q(ITEMS).where({ job: id }).delete();
    },
  };
}

/** The item store of a job: its kind's own (registerJobKind's `items`) or __JobItem rows. */
function itemStoreOf(site: Site, job: ClaimedJob): ItemStore {
  const open = jobItemStore(job.kind);
  return open ? open(site, job) : jobItemRows(site, job.id);
}

/** How many items of a job have an outcome. */
export function itemCount(site: Site, job: ClaimedJob): Promise<number> {
  return itemStoreOf(site, job).count();
}

/** Releases a job's item outcomes (once the job has ended and its result holds them). */
export async function deleteItems(site: Site, job: ClaimedJob, q?: Knex): Promise<void> {
  const store = itemStoreOf(site, job);
  if (q) await store.release(q);
  else await inWriteTransaction(site.db, (w) => store.release(w));
}

/** What the handler sees of the job's item store (`stopping` says when to hand the job back). */
async function itemsOfRun(store: ItemStore, site: Site, stopping: () => boolean): Promise<JobItems> {
  return {
    done: await store.outcomes(),
    all: () => store.outcomes(),
    recordIn: (trx, index, outcome) => store.recordIn(trx, index, outcome),
    // Ignored when the item has an outcome already (another worker took the job over and ran it).
    record: (index, outcome) => inWriteTransaction(site.db, (q) => store.recordOnce(q, index, outcome)),
    stopping,
  };
}

/**
 * Runs a claimed job as its user: resolves with the handler's result (or REQUEUE when it stopped early on
 * `stopping()`); rejects when the job fails: an unknown kind, a user disabled or deleted since it was queued
 * (nothing is changed), or the handler throwing.
 */
export async function runClaimedJob(site: Site, job: ClaimedJob, stopping: () => boolean): Promise<unknown> {
  const handler = jobHandler(job.kind);
  if (!handler) throw new AppError(`Unknown job kind ${job.kind}`);
  // The user as of now: a user disabled or deleted since the job was queued makes it fail, changing nothing.
  const user = await loadUser(site.db.knex, job.user);
  if (!user || !user.enabled)
    throw new AuthenticationError(`User ${job.user} is disabled or no longer exists`);
  return handler({
    site,
    id: job.id,
    user: { name: user.name, roles: user.roles },
    payload: job.payload,
    items: await itemsOfRun(itemStoreOf(site, job), site, stopping),
  });
}

/** The `error` a failed job shows: the service's own errors as `ExcType: message`, anything else without details. */
export function jobErrorText(err: unknown): string {
  return err instanceof AppError && err.message ? `${err.excType}: ${err.message}` : 'The job failed';
}
