// The site's document event log (`__Event`, an internal table like `__Job`: no DocType, so no REST surface, no
// permissions of its own and nothing for the generator): one row per insert, save, submit, cancel and delete, written
// by the lifecycle's afterWrite / afterDelete handlers inside the document's own transaction, so a row exists exactly
// when its change committed. Ids come from the database's auto-increment: on SQLite (one writer, a rolled-back
// savepoint gives its id back) they commit in order with no gaps; on MariaDB a gap is a transaction still open or one
// rolled back, which the feed (event-feed.ts) waits out briefly.
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import type { DeleteOperation, WritingSave } from '../document/extension-points';
import type { SaveAction } from '../document/hooks';
import type { Site } from '../site';

const EVENTS = SYSTEM_TABLES.events;

/** What happened to the document. */
export type EventAction = SaveAction | 'delete';

/** One row of the event log. */
export interface EventRow {
  id: number;
  doctype: string;
  docname: string;
  action: EventAction;
  modified: string | null;
  /** The user who made the change. */
  user: string;
  /** The document's owner (what a delete event's permission is checked against: the row is gone). */
  owner: string | null;
  /** When the change was written (ms since epoch). */
  created_at: number;
}

/** The event row of a save, as written. */
export function saveEvent(op: WritingSave): Omit<EventRow, 'id'> {
  return {
    doctype: op.binding.meta.name,
    docname: String(op.data.name),
    action: op.action,
    modified: typeof op.data.modified === 'string' ? op.data.modified : null,
    user: op.tx.user.name,
    owner: typeof op.data.owner === 'string' ? op.data.owner : null,
    created_at: Date.now(),
  };
}

/** The event row of a delete, as written. */
export function deleteEvent(op: DeleteOperation): Omit<EventRow, 'id'> {
  return {
    doctype: op.binding.meta.name,
    docname: String(op.stored.name ?? op.doc.name),
    action: 'delete',
    modified: typeof op.stored.modified === 'string' ? op.stored.modified : null,
    user: op.tx.user.name,
    owner: typeof op.stored.owner === 'string' ? op.stored.owner : null,
    created_at: Date.now(),
  };
}

/**
 * Writes an event inside the document's transaction `trx`, through the row store (prepared; on MariaDB held for the
 * batch's INSERT). Undefined when done at once, as lifecycle handlers answer.
 */
export function writeEvent(site: Site, trx: Knex, row: Omit<EventRow, 'id'>): Promise<void> | undefined {
  return site.rows.insertEvent(trx, row);
}

function decode(row: Record<string, unknown>): EventRow {
  return {
    id: Number(row.id),
    doctype: String(row.doctype),
    docname: String(row.docname),
    action: String(row.action) as EventAction,
    modified: row.modified === null || row.modified === undefined ? null : String(row.modified),
    user: String(row.user),
    owner: row.owner === null || row.owner === undefined ? null : String(row.owner),
    created_at: Number(row.created_at),
  };
}

/** Up to `limit` events with an id above `after`, oldest first. */
export async function eventsAfter(site: Site, after: number, limit: number): Promise<EventRow[]> {
  const rows = (await site.db
    .knex(EVENTS)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select('*')) as Record<string, unknown>[];
  return rows.map(decode);
}

/** Up to `limit` events of one DocType (and document, with `docname`) with an id in (after, upTo], oldest first. */
export async function eventsBetween(
  site: Site,
  after: number,
  upTo: number,
  limit: number,
  doctype: string,
  docname?: string,
): Promise<EventRow[]> {
  const query = site.db
    .knex(EVENTS)
    .where('id', '>', after)
    .andWhere('id', '<=', upTo)
    .andWhere('doctype', doctype);
  if (docname !== undefined) query.andWhere('docname', docname);
  const rows = (await query.orderBy('id').limit(limit).select('*')) as Record<string, unknown>[];
  return rows.map(decode);
}

/** The oldest and newest ids the log holds (0 when it is empty). */
export async function logBounds(site: Site): Promise<{ oldest: number; newest: number }> {
  const row = (await site.db.knex(EVENTS).min({ oldest: 'id' }).max({ newest: 'id' }).first()) as
    { oldest: unknown; newest: unknown } | undefined;
  return { oldest: Number(row?.oldest ?? 0), newest: Number(row?.newest ?? 0) };
}

/** The time of the first event at or after `id` (undefined past the end). */
async function timeAt(site: Site, id: number): Promise<number | undefined> {
  const row = (await site.db.knex(EVENTS).where('id', '>=', id).orderBy('id').first('created_at')) as
    { created_at: unknown } | undefined;
  return row ? Number(row.created_at) : undefined;
}

/**
 * Deletes the events older than the site's `event_retention_hours`, never the newest one (ids are never reused: the
 * next id is the newest's plus one); returns how many went. The cut is found by halving the id range through the
 * key (a dozen or so point reads; `created_at` has no index, to keep each document write one index lighter), as the
 * times grow with the ids (several processes' clocks may disagree by a little: an event may go a little early or late).
 */
export async function pruneEvents(site: Site, now = Date.now()): Promise<number> {
  const cutoff = now - site.config.site.event_retention_hours * 3_600_000;
  const { oldest, newest } = await logBounds(site);
  if (newest === 0) return 0;
  // The last id whose time is before the cutoff, searched in [oldest - 1, newest - 1] (oldest - 1: none is).
  let low = oldest - 1;
  let high = newest - 1;
  while (low < high) {
    const mid = Math.floor((low + high + 1) / 2);
    const at = await timeAt(site, mid);
    if (at !== undefined && at < cutoff) low = mid;
    else high = mid - 1;
  }
  if (low < oldest) return 0;
  return inWriteTransaction(site.db, (q) => q(EVENTS).where('id', '<=', low).delete());
}
