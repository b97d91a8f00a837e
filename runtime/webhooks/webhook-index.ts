// The enabled webhooks of a site, by DocType and event, as each process remembers them: dropped when this process
// writes a Webhook, and read again when older than CHECK_MS (a change made through another process counts within a
// second). A save looks its DocType up without a query; only a DocType with a webhook pays anything more.
import type { Knex } from 'knex';
import { loadUser } from '../auth/users';
import type { DocData } from '../db/row-store';
import { ADMINISTRATOR, SitePlugin, type SessionUser, type Site } from '../site';
import { parseTemplate } from './json-template';
import { systemLookup, type HostLookup } from './vet-url';

/** How long a loaded index is used before it is read again. */
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
  /** Bumped when this process writes a Webhook: a load begun before is not kept. */
  generation: number;
  /** How host names are resolved for the address policy (the system resolver; a test may set its own). */
  lookup: HostLookup;
}

/** The webhooks of a site in this process. */
export const WEBHOOKS = new SitePlugin<WebhookState>('webhooks', () => ({
  loadedAt: 0,
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
 * Reads the index with `q` (the open transaction of the save that asks: on SQLite a read beside it would wait for it
 * forever) and keeps it; a background read (no `q`) is shared.
 */
function load(site: Site, state: WebhookState, q?: Knex): Promise<WebhookIndex> {
  if (state.loading && !q) return state.loading;
  const generation = state.generation;
  const started = Date.now();
  const loading = readIndex(site, q ?? site.db.knex)
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
  if (!q) state.loading = loading;
  return loading;
}

/**
 * The index of the site: at once when one is loaded (one older than CHECK_MS is used while it is read again in the
 * background), else a promise for it, read with `q` (the save's transaction).
 */
export function webhookIndex(site: Site, q: Knex): WebhookIndex | Promise<WebhookIndex> {
  const state = WEBHOOKS.of(site);
  const index = state.index;
  if (!index) return load(site, state, q);
  if (Date.now() - state.loadedAt > CHECK_MS) void load(site, state).catch(() => undefined);
  return index;
}

/** Drops the index of this process (a Webhook was written here): the next save reads it again. */
export function forgetWebhooks(site: Site): void {
  const state = WEBHOOKS.of(site);
  state.generation++;
  state.index = undefined;
  state.loading = undefined;
}
