// Webhook Request Log rows: one per attempt of a delivery. A row is made Queued (`next_retry`: when it is due); its
// attempt turns it into Success, Failed (a next row is queued for the retry, `next_retry` says when) or Exhausted
// (the last attempt failed). While a Queued row is being worked on, its `next_retry` is a lease: a worker that died
// leaves it due again when the lease runs out, and the dispatcher hands it out again (at least once).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { timeOrderedName } from '../document/naming';
import { insertServiceRow } from '../document/service-row';
import type { Site } from '../site';

/** The DocType of the rows. */
export const LOG_DOCTYPE = 'Webhook Request Log';
/** Its table. */
export const LOG_TABLE = `tab${LOG_DOCTYPE}`;

/** How long a claimed row waits for its job before another process may queue it again. */
export const LEASE_MS = 10 * 60_000;

/** A log row's status. */
export type LogStatus = 'Queued' | 'Success' | 'Failed' | 'Exhausted';

/** `YYYY-MM-DD HH:MM:SS` (UTC) of a moment in ms, rounded up to the second. */
export function datetimeAt(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of now, rounded down to the second: due to any look that reads the clock after it. */
export function datetimeNow(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * A new Standard Webhooks message id: the same for every attempt of one delivery. 122 random bits from Node's batched
 * UUID entropy (randomBytes(16) per create was one syscall-sized draw each, 1.4% of a create with a webhook).
 */
export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/** What a new row holds besides the standard fields. */
export interface LogValues {
  webhook: string;
  reference_doctype: string;
  reference_document: string;
  user: string;
  url: string;
  request_method: string;
  headers: string;
  data: string;
  message_id: string;
  status: LogStatus;
  attempts: number;
  next_retry: string | null;
  error?: string | null;
}

/** Inserts a log row in the write transaction `trx`; returns its name (time-ordered: one index page per commit). */
export async function insertLogRow(site: Site, trx: Knex, values: LogValues, user: string): Promise<string> {
  const binding = site.registry.get(LOG_DOCTYPE);
  if (!binding) throw new Error(`${LOG_DOCTYPE} is not a DocType of this site`);
  const name = timeOrderedName();
  await insertServiceRow(site, trx, binding, name, values, user);
  return name;
}
