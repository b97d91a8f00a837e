// The site's enabled Server Scripts, read once and kept until a Server Script document changes. A change made by this
// process drops the cache after its commit; with REDIS_URL it is published, and every process subscribed drops its own.
import type { Knex } from 'knex';
import type { Site } from '../site';
import { siteRedis } from '../auth/site-redis';

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
  /** Bumped on every drop: a load that began before it is not kept. */
  generation: number;
  subscribed?: boolean;
}

const perSite = new WeakMap<Site, SiteScripts>();

function stateOf(site: Site): SiteScripts {
  let state = perSite.get(site);
  if (!state) perSite.set(site, (state = { generation: 0 }));
  return state;
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

async function load(site: Site, q: Knex): Promise<ScriptIndex> {
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
  return index;
}

function channelOf(prefix: string): string {
  return `${prefix}server-scripts`;
}

/** Subscribes this process to the site's change notices (once, with REDIS_URL). */
function subscribe(site: Site, state: SiteScripts): void {
  if (state.subscribed) return;
  const shared = siteRedis(site);
  if (!shared) return;
  state.subscribed = true;
  const sub = shared.redis.duplicate();
  sub.on('error', () => undefined);
  sub.on('message', () => drop(site));
  void sub.subscribe(channelOf(shared.prefix)).catch(() => undefined);
  subscribers.set(site, sub);
}

const subscribers = new WeakMap<Site, { quit(): Promise<unknown>; disconnect(): void }>();

function drop(site: Site): void {
  const state = stateOf(site);
  state.generation++;
  state.index = undefined;
}

/**
 * The site's enabled scripts (loaded on first use, then cached until a Server Script changes). Inside a write
 * transaction pass its knex `q`: on SQLite any other query would wait for that transaction's commit.
 */
export function scriptIndex(site: Site, q?: Knex): Promise<ScriptIndex> {
  const state = stateOf(site);
  subscribe(site, state);
  if (!state.index) {
    const generation = state.generation;
    const loading = load(site, q ?? site.db.knex);
    state.index = loading;
    loading.catch(() => {
      if (state.index === loading) state.index = undefined;
    });
    void loading.then(() => {
      if (state.generation !== generation && state.index === loading) state.index = undefined;
    });
  }
  return state.index;
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
  const shared = siteRedis(site);
  if (shared) await shared.redis.publish(channelOf(shared.prefix), 'changed').catch(() => undefined);
}

/** Closes the site's change subscription (shutdown, tests). */
export async function closeServerScripts(site: Site): Promise<void> {
  const sub = subscribers.get(site);
  subscribers.delete(site);
  perSite.delete(site);
  if (sub) await sub.quit().catch(() => sub.disconnect());
}
