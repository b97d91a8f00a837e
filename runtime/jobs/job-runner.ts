// What every backend does to run one job: load the user it runs as (as of now), hand its handler the payload and the
// item store, and say how it ended. The per-item outcomes always live in the site database (__JobItem), written in the
// transaction of the item's own write, whichever backend (the jobs table or BullMQ on Redis) holds the job itself:
// that is what makes an item's outcome single even when two workers briefly run the same job.
import type { Knex } from 'knex';
import { loadUser } from '../auth/users';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import { AppError, AuthenticationError } from '../errors/errors';
import type { Site } from '../site';
import { jobHandler, type JobItems } from './job-queue';

const ITEMS = SYSTEM_TABLES.jobItems;
/** The key of an item's outcome. */
const ITEM_KEY = ['job', 'idx'] as const;

/** A job as a worker picks it up: its id, kind, the user it runs as and its payload (as enqueued). */
export interface ClaimedJob {
  id: string;
  kind: string;
  user: string;
  payload: unknown;
}

/** The stored outcomes of a job, by item index. */
export async function itemOutcomes(site: Site, id: string): Promise<Map<number, unknown>> {
  const rows = (await site.db.knex(ITEMS).where({ job: id }).select('idx', 'outcome')) as {
    idx: unknown;
    outcome: string;
  }[];
  return new Map(rows.map((r) => [Number(r.idx), JSON.parse(r.outcome) as unknown]));
}

/** How many items of a job have an outcome. */
export async function itemCount(site: Site, id: string): Promise<number> {
  const counted = (await site.db.knex(ITEMS).where({ job: id }).count({ n: '*' }).first()) as { n: unknown };
  return Number(counted.n);
}

/** Deletes a job's item outcomes (once the job has ended and its result holds them). */
export async function deleteItems(site: Site, id: string, q?: Knex): Promise<void> {
  if (q) await q(ITEMS).where({ job: id }).delete();
  else await inWriteTransaction(site.db, (w) => w(ITEMS).where({ job: id }).delete());
}

/** The item store of a job: earlier outcomes, and recording new ones (`stopping` says when to hand the job back). */
async function itemStore(site: Site, id: string, stopping: () => boolean): Promise<JobItems> {
  return {
    done: await itemOutcomes(site, id),
    all: () => itemOutcomes(site, id),
    recordIn: async (trx, index, outcome) => {
      const row = { job: id, idx: index, outcome: JSON.stringify(outcome) };
      // Through the row store: on SQLite a knex insert cost ~40 us per item (query building, and better-sqlite3
      // preparing its text again each time), a third of a bulk insert's item.
      await site.rows.insertRows(trx, ITEMS, [row]);
    },
    record: async (index, outcome) => {
      // Ignored when the item has an outcome already (another worker took the job over and ran it).
      await inWriteTransaction(site.db, (q) =>
        site.rows.insertRowOnce(
          q,
          ITEMS,
          { job: id, idx: index, outcome: JSON.stringify(outcome) },
          ITEM_KEY,
        ),
      );
    },
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
    items: await itemStore(site, job.id, stopping),
  });
}

/** The `error` a failed job shows: the service's own errors as `ExcType: message`, anything else without details. */
export function jobErrorText(err: unknown): string {
  return err instanceof AppError && err.message ? `${err.excType}: ${err.message}` : 'The job failed';
}
