// The orphan-file sweep, a scheduled job: removes stored bytes no File row accounts for (a process that died between
// storing an upload and committing its File, or before removing a refused upload's bytes) once they have not changed
// for SWEEP_GRACE_MS, so an upload in flight is never touched (the store's sweep: local-sweep.ts). Every process that
// runs a job worker queues a sweep job SWEEP_FIRST_MS after it starts and then every SWEEP_EVERY_MS; sweeps are idempotent and safe side by side, so two
// processes queueing one each cost a second walk of the folders, never a wrong removal.
import { jobQueueOf, registerJobKind, type JobRun } from '../jobs/job-queue';
import { ADMINISTRATOR, SitePlugin, type Site } from '../site';
import { fileUrlOf } from './file-names';
import { siteStorage } from './site-files';
import type { StorageKey, StoredReferences, SweepResult } from './storage';

/** The kind name of sweep jobs. */
export const FILE_SWEEP_JOB = 'file-sweep';
/** Stored content younger than this (since its last link or unlink) is never swept: an upload may be in flight. */
export const SWEEP_GRACE_MS = 3_600_000;
/** How long after its start a worker process queues its first sweep (a short-lived process queues none). */
export const SWEEP_FIRST_MS = 10 * 60_000;
/** How often a worker process queues a sweep after the first. */
export const SWEEP_EVERY_MS = 6 * 3_600_000;

/** What the site's File rows say of stored names and content. */
function fileReferences(site: Site): StoredReferences {
  const { knex } = site.db;
  return {
    async named(keys: readonly StorageKey[]): Promise<boolean[]> {
      const urls = keys.map(fileUrlOf);
      const rows = (await knex('tabFile').whereIn('file_url', urls).distinct('file_url')) as {
        file_url: string;
      }[];
      const found = new Set(rows.map((row) => row.file_url));
      return urls.map((url) => found.has(url));
    },
    async held(contentHashes: readonly string[]): Promise<boolean[]> {
      const rows = (await knex('tabFile')
        .whereIn('content_hash', [...contentHashes])
        .distinct('content_hash')) as { content_hash: string }[];
      const found = new Set(rows.map((row) => row.content_hash));
      return contentHashes.map((hash) => found.has(hash));
    },
  };
}

/** Sweeps the site's file store: what no File row accounts for and what has not changed for `graceMs`. */
export function sweepOrphanFiles(site: Site, graceMs = SWEEP_GRACE_MS): Promise<SweepResult> {
  return siteStorage(site).sweep(graceMs, fileReferences(site));
}

/** The sweep job: its result is what it removed. */
function runSweepJob(run: JobRun): Promise<SweepResult> {
  return sweepOrphanFiles(run.site);
}

registerJobKind(FILE_SWEEP_JOB, runSweepJob);

/** The site's sweep timer in this process, stopped when the site closes. */
const SWEEPS = new SitePlugin<{ timer?: NodeJS.Timeout }>(
  'file sweep',
  () => ({}),
  (state) => clearTimeout(state.timer),
);

/**
 * Queues sweep jobs in this process (one that runs a job worker): SWEEP_FIRST_MS after now, then every SWEEP_EVERY_MS.
 * A sweep that could not be queued waits for the next.
 */
export function startFileSweep(site: Site): void {
  const state = SWEEPS.of(site);
  if (state.timer || !site.registry.get('File')) return;
  const next = (delay: number) => {
    state.timer = setTimeout(() => {
      void jobQueueOf(site)
        ?.enqueue(FILE_SWEEP_JOB, ADMINISTRATOR, {}, 1)
        .catch(() => undefined);
      next(SWEEP_EVERY_MS);
    }, delay);
    state.timer.unref();
  };
  next(SWEEP_FIRST_MS);
}
