// The site's enabled Server Scripts, read once and kept until a Server Script document changes. A change made by this
// process drops the cache after its commit; with REDIS_URL it is published, and every process subscribed drops its own.
// Without REDIS_URL each process checks the database at most once per CHECK_MS (a timer, never on a request's path):
// the backend's change version of `tabServer Script` (Database.changeVersion: on MariaDB the change counter's, one
// indexed read; on SQLite `PRAGMA data_version`, no I/O, which moves on any commit, so then the scripts are read again
// and swapped in only when they differ). A change another process committed is in effect here within CHECK_MS plus two reads.
// With REDIS_URL the same check runs while notices cannot arrive (before the subscription is live, and while Redis is
// away), so an outage keeps that bound; once the subscription is live again the scripts are read again and it stops.
import type { Knex } from 'knex';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { RedisSubscription } from '../redis/redis-subscription';
import { publishNotice, siteRedis } from '../redis/site-redis';
import { inlineWarm, preloadInline } from './inline-sandbox';

/** One enabled Server Script, as the dispatchers need it. */
export interface ServerScript {
  name: string;
  scriptType: 'API' | 'DocType Event' | 'Permission Query' | 'Scheduler Event';
  script: string;
  /** The document's `modified`: the compiled form is keyed by name and this. */
  modified: string;
  apiMethod?: string;
  allowGuest: boolean;
  rateLimit?: { limit: number; seconds: number };
  referenceDoctype?: string;
  doctypeEvent?: string;
  /** Scheduler Event scripts: `event_frequency` (All, Hourly, ..., Cron) and, for Cron, `cron_format`. */
  eventFrequency?: string;
  cronFormat?: string;
  /** The document's `creation` (ms since the epoch): a scheduled script runs no occurrence before it. */
  createdAt: number;
  /** The user who last saved it (`modified_by`): a scheduled script runs as that user. */
  modifiedBy: string;
}

/** The enabled scripts of a site, indexed the ways they are looked up. */
export interface ScriptIndex {
  /** API scripts by `api_method`. */
  api: Map<string, ServerScript>;
  /** DocType Event scripts by `<reference_doctype>|<doctype_event>`, in name order. */
  events: Map<string, ServerScript[]>;
  /** Permission Query scripts by reference DocType. */
  permissionQueries: Map<string, ServerScript[]>;
  /** Scheduler Event scripts, in name order. */
  scheduled: ServerScript[];
}

interface SiteScripts {
  index?: Promise<ScriptIndex>;
  /** What `index` resolved to, while it is the current one: read without a promise on every document hook. */
  loaded?: ScriptIndex;
  /** Bumped on every drop: a load that began before it is not kept. */
  generation: number;
  /** With REDIS_URL: the subscription to the site's change notices. */
  subscription?: RedisSubscription;
  /** The database's version read just before `loaded` was read, and the fingerprint of its rows. */
  version?: string;
  fingerprint?: string;
  /** Without REDIS_URL, or while the subscription is not live: the timer checking the version; whether a check runs. */
  timer?: NodeJS.Timeout;
  checking?: boolean;
}

/**
 * How often (ms) a process without REDIS_URL checks whether another one changed a Server Script: the bound on how long
 * it may still run the old script. A second is within the time a person takes to save a script and call it, and costs
 * one single-row read a second per process on MariaDB (none on SQLite until something was written).
 */
export const CHECK_MS = 1000;

/** How long saving a Server Script waits at most for the inline program's warm-up (after its load). */
const INLINE_WARM_WAIT_MS = 3000;

/** The site's scripts: the cached index, and how this process learns of changes (a subscription or a timer). */
export const SITE_SCRIPTS = new SitePlugin<SiteScripts>(
  'server scripts',
  () => ({ generation: 0 }),
  (state) => {
    if (state.timer) clearInterval(state.timer);
    state.subscription?.close();
  },
);

function stateOf(site: Site): SiteScripts {
  return SITE_SCRIPTS.of(site);
}

const EVENT_KEY = (doctype: string, event: string) => `${doctype}|${event}`;

/** A stored datetime (UTC text, or a Date from a driver) as milliseconds since the epoch; unreadable is 0. */
function timestampOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  const ms = Date.parse(
    `${String(value ?? '')
      .trim()
      .replace(' ', 'T')}Z`,
  );
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * A value that moves whenever `tabServer Script` may have changed (read through `q`, so inside a transaction from its
 * snapshot): the backend's change version of the table.
 */
function versionOf(site: Site, q: Knex): Promise<string> {
  return site.db.changeVersion(q, 'tabServer Script');
}

interface Loaded {
  index: ScriptIndex;
  fingerprint: string;
}

async function load(site: Site, q: Knex): Promise<ScriptIndex> {
  return (await loadRows(site, q)).index;
}

async function loadRows(site: Site, q: Knex): Promise<Loaded> {
  const rows = (await q('tabServer Script')
    .where((q) => q.where('disabled', 0).orWhereNull('disabled'))
    .orderBy('name')
    .select(
      'name',
      'script_type',
      'script',
      'modified',
      'api_method',
      'allow_guest',
      'enable_rate_limit',
      'rate_limit_count',
      'rate_limit_seconds',
      'reference_doctype',
      'doctype_event',
      'event_frequency',
      'cron_format',
      'creation',
      'modified_by',
    )) as Record<string, unknown>[];
  const index: ScriptIndex = {
    api: new Map(),
    events: new Map(),
    permissionQueries: new Map(),
    scheduled: [],
  };
  for (const row of rows) {
    const limit = Number(row.rate_limit_count ?? 5);
    const seconds = Number(row.rate_limit_seconds ?? 86400);
    const script: ServerScript = {
      name: String(row.name),
      scriptType: row.script_type as ServerScript['scriptType'],
      script: String(row.script ?? ''),
      modified: String(row.modified),
      allowGuest: Number(row.allow_guest) === 1,
      createdAt: timestampOf(row.creation),
      modifiedBy: String(row.modified_by ?? ''),
      ...(row.api_method ? { apiMethod: String(row.api_method) } : {}),
      ...(row.reference_doctype ? { referenceDoctype: String(row.reference_doctype) } : {}),
      ...(row.doctype_event ? { doctypeEvent: String(row.doctype_event) } : {}),
      ...(row.event_frequency ? { eventFrequency: String(row.event_frequency) } : {}),
      ...(row.cron_format ? { cronFormat: String(row.cron_format) } : {}),
      ...(Number(row.enable_rate_limit) === 1 && limit > 0 && seconds > 0
        ? { rateLimit: { limit: Math.floor(limit), seconds: Math.floor(seconds) } }
        : {}),
    };
    if (script.scriptType === 'API' && script.apiMethod) index.api.set(script.apiMethod, script);
    else if (script.scriptType === 'DocType Event' && script.referenceDoctype && script.doctypeEvent) {
      const key = EVENT_KEY(script.referenceDoctype, script.doctypeEvent);
      index.events.set(key, [...(index.events.get(key) ?? []), script]);
    } else if (script.scriptType === 'Permission Query' && script.referenceDoctype) {
      const key = script.referenceDoctype;
      index.permissionQueries.set(key, [...(index.permissionQueries.get(key) ?? []), script]);
    } else if (script.scriptType === 'Scheduler Event' && script.eventFrequency) {
      index.scheduled.push(script);
    }
  }
  // A site with scripts gets the event loop's own sandbox loaded now, before they are called (inline-sandbox.ts).
  if (rows.length > 0 && site.config.site.server_script_enabled !== false) preloadInline();
  return { index, fingerprint: JSON.stringify(rows) };
}

function channelOf(prefix: string): string {
  return `${prefix}server-scripts`;
}

/** Subscribes this process to the site's change notices (once, with REDIS_URL). */
function subscribe(site: Site, state: SiteScripts): void {
  if (state.subscription) return;
  const shared = siteRedis(site);
  if (!shared) return;
  // Until the subscription is live, and while it is lost (Redis down), notices cannot arrive: the version is checked
  // as without REDIS_URL. Live (again): a notice may have been missed, so the scripts are read again; the check stops.
  watch(site, state);
  state.subscription = new RedisSubscription(shared.redis, channelOf(shared.prefix), {
    message: () => drop(site),
    live: () => {
      unwatch(state);
      drop(site);
    },
    lost: () => watch(site, state),
  });
}

function drop(site: Site): void {
  const state = stateOf(site);
  state.generation++;
  state.index = undefined;
  state.loaded = undefined;
  state.version = undefined;
  state.fingerprint = undefined;
}

/** Starts checking the database's version once per CHECK_MS: without REDIS_URL, or while Redis is away. */
function watch(site: Site, state: SiteScripts): void {
  if (state.timer) return;
  state.timer = setInterval(() => void check(site, state), CHECK_MS);
  state.timer.unref();
}

/** Stops the version check (the subscription is live: notices arrive again). */
function unwatch(state: SiteScripts): void {
  if (state.timer) clearInterval(state.timer);
  state.timer = undefined;
}

/**
 * When the version moved since the loaded scripts were read, reads them again and swaps them in if they differ (a
 * change made meanwhile by this process, which drops them, wins). Requests keep the loaded scripts until then.
 */
async function check(site: Site, state: SiteScripts): Promise<void> {
  if (state.checking || !state.loaded || state.version === undefined || SITE_SCRIPTS.peek(site) !== state)
    return;
  state.checking = true;
  try {
    const generation = state.generation;
    const version = await versionOf(site, site.db.knex);
    if (version === state.version || state.generation !== generation) return;
    const fresh = await loadRows(site, site.db.knex);
    if (state.generation !== generation) return;
    state.version = version;
    if (fresh.fingerprint === state.fingerprint) return;
    state.generation++;
    state.fingerprint = fresh.fingerprint;
    state.loaded = fresh.index;
    state.index = Promise.resolve(fresh.index);
  } catch {
    // The database is unreachable: the next tick tries again.
  } finally {
    state.checking = false;
  }
}

/**
 * The site's enabled scripts (loaded on first use, then cached until a Server Script changes). Inside a write
 * transaction pass its knex `q`: on SQLite any other query would wait for that transaction's commit.
 */
export function scriptIndex(site: Site, q?: Knex): Promise<ScriptIndex> {
  const state = stateOf(site);
  subscribe(site, state);
  if (!siteRedis(site)) watch(site, state);
  if (!state.index) {
    const generation = state.generation;
    const reading = (async () => {
      // The version first: a change committed after it moves it, and the next check reads the scripts again. Read
      // with REDIS_URL too: Redis may go away while these scripts are kept, and then the check compares against it.
      const version = await versionOf(site, q ?? site.db.knex).catch(() => undefined);
      return { version, ...(await loadRows(site, q ?? site.db.knex)) };
    })();
    const loading = reading.then((read) => read.index);
    state.index = loading;
    loading.catch(() => {
      if (state.index === loading) state.index = undefined;
    });
    void reading.then(
      (read) => {
        if (state.generation !== generation && state.index === loading) state.index = undefined;
        else if (state.index === loading) {
          state.loaded = read.index;
          state.version = read.version;
          state.fingerprint = read.fingerprint;
        }
      },
      () => undefined,
    );
  }
  return state.index;
}

/** The site's enabled scripts when they are loaded and current, else undefined (then use scriptIndex). */
export function loadedScriptIndex(site: Site): ScriptIndex | undefined {
  return SITE_SCRIPTS.peek(site)?.loaded;
}

/**
 * The site's enabled scripts read now from the database, bypassing the cache: for the scheduler, which reads them once
 * a minute and must see a script saved by another process even without REDIS_URL.
 */
export function freshScriptIndex(site: Site): Promise<ScriptIndex> {
  return load(site, site.db.knex);
}

/** Drops the site's scripts here and, with REDIS_URL, in every other process (called after a Server Script commit). */
export async function serverScriptsChanged(site: Site): Promise<void> {
  drop(site);
  // The inline program loaded and warmed before the save is answered (once per process; bounded): the saved script's
  // first calls then run at full speed rather than in a worker or on a cold program.
  if (site.config.site.server_script_enabled !== false) await inlineWarm(INLINE_WARM_WAIT_MS);
  const shared = siteRedis(site);
  if (shared) await publishNotice(shared, channelOf(shared.prefix), 'changed');
}
