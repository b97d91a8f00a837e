// Scheduler Event scripts: every process that runs a job worker ticks once a minute; each tick finds the enabled
// scheduled scripts whose latest occurrence (see script-schedule.ts) has not run yet, claims that occurrence in the
// site database (one row per script and occurrence, so one process wins however many tick at once) and queues a job
// that runs the script as the user who last saved it, with that user's permissions (a System Manager's script cannot
// do what its author could not by running as Administrator). Occurrences missed while nothing ran are not made up: a daily script after a
// three-day stop runs once. An occurrence before the script's creation never runs. A job is at least once: a worker
// killed while the script ran runs it again when the job is taken over. Scripts are read from the database at each tick
// and each run (not from the per-process cache), so a change made through another process counts without REDIS_URL.
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import { isDuplicateKeyError } from '../db/document-rows';
import { jobQueueOf, type JobRun, registerJobKind } from '../jobs/job-queue';
import { loadUser } from '../auth/users';
import { AuthenticationError } from '../errors/errors';
import type { SessionUser, Site } from '../site';
import { SitePlugin } from '../site';
import { runScript } from './run-script';
import { DEFAULT_SCHEDULER_INTERVAL, cronOf, latestOccurrence } from './script-schedule';
import { freshScriptIndex, type ServerScript } from './script-store';

/** The kind name of scheduled-script jobs. */
export const SCHEDULED_SCRIPT_JOB = 'server-script';

/** What a scheduled-script job stores. */
export interface ScheduledScriptPayload {
  script: string;
  /** The occurrence it runs for (ms since the epoch). */
  occurrence: number;
}

const RUNS = SYSTEM_TABLES.scheduledRuns;

/** How often a worker process looks for due scripts (cron's resolution is a minute). */
const TICK_MS = 60_000;

/** The zone cron expressions are read in: site config `time_zone`, default UTC. */
function timeZoneOf(site: Site): string {
  return site.config.site.time_zone || 'UTC';
}

/** The occurrence a script is due for at `now`, or undefined (not yet due since its creation, or unschedulable). */
function dueOccurrence(site: Site, script: ServerScript, now: number): number | undefined {
  const interval = site.config.site.scheduler_interval ?? DEFAULT_SCHEDULER_INTERVAL;
  try {
    const at = latestOccurrence(
      cronOf(script.eventFrequency ?? '', script.cronFormat, interval),
      now,
      timeZoneOf(site),
    );
    return at >= script.createdAt ? at : undefined;
  } catch {
    // Saving refuses a bad expression; one stored before that check (or a changed time_zone) is skipped, not fatal.
    return undefined;
  }
}

/** Claims older than this (and not a script's newest) are removed: no process's tick lags that far behind. */
const CLAIM_RETENTION_MS = 24 * 3_600_000;

/**
 * Claims `occurrence` of `script` for this process: true when no process claimed it, or a later occurrence, before
 * (a process whose tick lags never runs an occurrence older than one already run). Old claims are pruned.
 */
async function claim(site: Site, script: string, occurrence: number): Promise<boolean> {
  try {
    return await inWriteTransaction(site.db, async (q: Knex) => {
      const seen = (await q(RUNS)
        .where({ script })
        .andWhere('occurrence', '>=', occurrence)
        .first('script')) as unknown;
      if (seen) return false;
      await q(RUNS).insert({ script, occurrence, claimed_at: Date.now() });
      await q(RUNS)
        .where({ script })
        .andWhere('occurrence', '<', occurrence)
        .andWhere('claimed_at', '<', Date.now() - CLAIM_RETENTION_MS)
        .delete();
      return true;
    });
  } catch (err) {
    if (isDuplicateKeyError(site.db, err)) return false; // another process claimed it between our read and our insert
    throw err;
  }
}

/** Gives a claim back (its job could not be queued), so the next tick tries the occurrence again. */
async function unclaim(site: Site, script: string, occurrence: number): Promise<void> {
  await inWriteTransaction(site.db, (q) => q(RUNS).where({ script, occurrence }).delete());
}

/**
 * One scheduler tick at `now`: queues a job for each scheduled script that is due and not yet claimed, and returns the
 * ids of the jobs it queued. Nothing runs when `server_script_enabled` is false or the site has no job queue.
 */
export async function tickScheduler(site: Site, now = Date.now()): Promise<string[]> {
  const jobs = jobQueueOf(site);
  if (!jobs || site.config.site.server_script_enabled === false) return [];
  const queued: string[] = [];
  for (const script of (await freshScriptIndex(site)).scheduled) {
    const occurrence = dueOccurrence(site, script, now);
    if (occurrence === undefined || !(await claim(site, script.name, occurrence))) continue;
    const payload: ScheduledScriptPayload = { script: script.name, occurrence };
    try {
      queued.push(await jobs.enqueue(SCHEDULED_SCRIPT_JOB, script.modifiedBy, payload, 1));
    } catch (err) {
      await unclaim(site, script.name, occurrence).catch(() => undefined);
      throw err;
    }
  }
  return queued;
}

/** The site's scheduler in this process: its timer, stopped when the site closes. */
export const SCHEDULER = new SitePlugin<{ timer?: NodeJS.Timeout }>(
  'scheduler',
  () => ({}),
  (state) => clearInterval(state.timer),
);

/** Starts the site's scheduler in this process (a tick now, then once a minute); a tick that fails is retried next time. */
export function startScheduler(site: Site): void {
  const state = SCHEDULER.of(site);
  if (state.timer) return;
  const tick = () => void tickScheduler(site).catch(() => undefined);
  state.timer = setInterval(tick, TICK_MS);
  state.timer.unref();
  tick();
}

/** The user a scheduled script runs as now: its last saver, enabled, with the roles it has now. */
async function authorOf(run: JobRun, script: ServerScript): Promise<SessionUser> {
  if (script.modifiedBy === run.user.name) return run.user;
  // Saved again by someone else since the job was queued: the text that runs is theirs, so are the permissions.
  const user = await loadUser(run.site.db.knex, script.modifiedBy);
  if (!user || !user.enabled)
    throw new AuthenticationError(`User ${script.modifiedBy} is disabled or no longer exists`);
  return { name: user.name, roles: user.roles };
}

/**
 * Runs a scheduled script's job as the user who last saved the script, with that user's permissions: the script as it
 * is now, with an empty `form_dict`. A script disabled, deleted or no longer scheduled since it was queued is skipped.
 * The result is the script's `frappe.response.message`; an error fails the job with the error's class and message.
 */
export async function runScheduledScript(run: JobRun): Promise<unknown> {
  const { script: name, occurrence } = run.payload as ScheduledScriptPayload;
  const script = (await freshScriptIndex(run.site)).scheduled.find((s) => s.name === name);
  if (!script) return { script: name, occurrence, skipped: 'disabled, deleted or no longer scheduled' };
  const user = await authorOf(run, script);
  const result = await runScript(script, { site: run.site, user, version: 2 }, { form_dict: {} });
  return { script: name, occurrence, message: result.message ?? null };
}

registerJobKind(SCHEDULED_SCRIPT_JOB, runScheduledScript);
