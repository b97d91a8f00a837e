// The enabled webhooks of a site, by DocType and event, as each process remembers them: dropped when this process
// writes a Webhook and, with REDIS_URL, when another one publishes that it wrote one; never used once older than
// CHECK_MS, so without the notice (no Redis, Redis down) a change made through another process counts within a
// second. A save looks its DocType up without a query while the index is fresh; the save that finds it stale reads it
// again (one query on a site without webhooks, once a second per process), and saves meanwhile wait for that read.
import type { Knex } from 'knex';
import { loadUser } from '../auth/users';
import type { DocData } from '../db/row-store';
import { ChangeBroadcast } from '../redis/change-broadcast';
import { ADMINISTRATOR, SitePlugin, type SessionUser, type Site } from '../site';
import { parseTemplate } from './json-template';
import { systemLookup, type HostLookup } from './vet-url';

/** How long a loaded index is used: an event that finds it older reads it again before choosing its webhooks. */
export const CHECK_MS = 1000;

/** One enabled webhook as delivery needs it. */
export interface WebhookRecord {
  name: string;
  doctype: string;
  docevent: string;
  condition: string;
  requestUrl: string;
  method: string;
  structure: string;
  /** Form URL-Encoded: key ← fieldname. */
  data: { fieldname: string; key: string }[];
  headers: { key: string; value: string }[];
  /** JSON: the parsed `webhook_json`, undefined when empty (the document as JSON). */
  template: ReturnType<typeof parseTemplate> | undefined;
  modified: string;
  /**
   * Whose read the body is limited to: the webhook's owner, and its last editor when that is another user (a System
   * Manager who edits an Administrator's webhook must not receive what only the Administrator may read). The condition
   * runs as the last of them. Empty when one of them is gone or disabled: nothing is sent.
   */
  readers: SessionUser[];
}

/** The enabled webhooks by `<DocType>|<event>`, and the DocTypes having any. */
export interface WebhookIndex {
  byEvent: Map<string, WebhookRecord[]>;
  doctypes: ReadonlySet<string>;
}

interface WebhookState {
  index?: WebhookIndex;
  loadedAt: number;
  loading?: Promise<WebhookIndex>;
  /** When `loading` began: an event that finds the index stale waits for a load begun within CHECK_MS. */
  loadingSince: number;
  /** Bumped when the index is dropped (here, or by a notice): a load begun before is not kept. */
  generation: number;
  /** How host names are resolved for the address policy (the system resolver; a test may set its own). */
  lookup: HostLookup;
}

/** The webhooks of a site in this process. */
export const WEBHOOKS = new SitePlugin<WebhookState>('webhooks', () => ({
  loadedAt: 0,
  loadingSince: 0,
  generation: 0,
  lookup: systemLookup,
}));

const rowsOf = (value: unknown): DocData[] => (Array.isArray(value) ? (value as DocData[]) : []);

/** A stored Webhook as a record (its owner looked up with `q`). */
async function recordOf(q: Knex, data: DocData): Promise<WebhookRecord> {
  const owner = String(data.owner ?? ADMINISTRATOR);
  const editor = String(data.modified_by ?? owner);
  const readers: SessionUser[] = [];
  for (const name of editor === owner ? [owner] : [owner, editor]) {
    const user = await loadUser(q, name);
    if (!user?.enabled) {
      readers.length = 0;
      break;
    }
    readers.push({ name: user.name, roles: user.roles });
  }
  const json = String(data.webhook_json ?? '').trim();
  return {
    name: String(data.name),
    doctype: String(data.webhook_doctype),
    docevent: String(data.webhook_docevent),
    condition: String(data.condition ?? '').trim(),
    requestUrl: String(data.request_url ?? '').trim(),
    method: String(data.request_method || 'POST'),
    structure: String(data.request_structure ?? ''),
    data: rowsOf(data.webhook_data).map((r) => ({ fieldname: String(r.fieldname), key: String(r.key) })),
    headers: rowsOf(data.webhook_headers)
      .filter((r) => r.key && r.value)
      .map((r) => ({ key: String(r.key).trim(), value: String(r.value).trim() })),
    template: json && data.request_structure !== 'Form URL-Encoded' ? parseTemplate(json) : undefined,
    modified: String(data.modified),
    readers,
  };
}

/** Reads every enabled webhook of the site. */
async function readIndex(site: Site, knex: Knex): Promise<WebhookIndex> {
  const binding = site.registry.get('Webhook');
  const byEvent = new Map<string, WebhookRecord[]>();
  if (!binding) return { byEvent, doctypes: new Set() };
  const names = (await knex('tabWebhook').where({ enabled: 1 }).orderBy('name').select('name')) as {
    name: string;
  }[];
  for (const { name } of names) {
    const data = await site.rows.load(knex, binding, name);
    if (!data) continue;
    let record: WebhookRecord;
    try {
      record = await recordOf(knex, data);
    } catch {
      continue; // saved before a check refused it: skipped, never fatal to the writes of its DocType
    }
    const key = `${record.doctype}|${record.docevent}`;
    byEvent.set(key, [...(byEvent.get(key) ?? []), record]);
  }
  return { byEvent, doctypes: new Set([...byEvent.values()].flat().map((w) => w.doctype)) };
}

/**
 * Reads the index with `q`, the open transaction of the save that asks (on SQLite a read beside it would wait for it
 * forever), and keeps it. A load begun within CHECK_MS is shared: what it reads is as fresh as the bound asks (another
 * transaction's load that fails is done again with `q`).
 */
function load(site: Site, state: WebhookState, q: Knex): Promise<WebhookIndex> {
  WEBHOOK_NOTICES.listen(site);
  const shared = state.loading;
  if (shared && Date.now() - state.loadingSince <= CHECK_MS) return shared.catch(() => read(site, state, q));
  return read(site, state, q);
}

/** Reads the index with `q` as the load others may share, and keeps it unless the index was dropped meanwhile. */
function read(site: Site, state: WebhookState, q: Knex): Promise<WebhookIndex> {
  const generation = state.generation;
  const started = Date.now();
  const loading = readIndex(site, q)
    .then((index) => {
      if (state.generation === generation) {
        state.index = index;
        state.loadedAt = started;
      }
      return index;
    })
    .finally(() => {
      if (state.loading === loading) state.loading = undefined;
    });
  state.loading = loading;
  state.loadingSince = started;
  return loading;
}

/**
 * The index of the site: at once while the loaded one is at most CHECK_MS old, else a promise for it, read with `q`
 * (the save's transaction).
 */
export function webhookIndex(site: Site, q: Knex): WebhookIndex | Promise<WebhookIndex> {
  const state = WEBHOOKS.of(site);
  const index = state.index;
  if (index && Date.now() - state.loadedAt <= CHECK_MS) return index;
  return load(site, state, q);
}

/** Drops the index of this process (a Webhook was written here or elsewhere): the next save reads it again. */
export function forgetWebhooks(site: Site): void {
  const state = WEBHOOKS.of(site);
  state.generation++;
  state.index = undefined;
  state.loading = undefined;
}

/**
 * Other processes' notices that a Webhook was written (with REDIS_URL): each drops its index, and again when its
 * subscription is live after an outage. Subscribed at a process's first look at the index.
 */
export const WEBHOOK_NOTICES = new ChangeBroadcast('webhook notices', 'webhooks', forgetWebhooks);

/**
 * A Webhook was written here (called after its transaction): drops the index here and, with REDIS_URL, tells every
 * other process to drop its own. A Redis that is down (the breaker open) costs only the notice, at once.
 */
export const webhooksChanged = (site: Site): Promise<void> => WEBHOOK_NOTICES.changed(site);
