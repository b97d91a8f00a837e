// Idempotency-Key on document creates (as Stripe and the IETF httpapi draft): a client that sends a key may retry its
// POST safely. The key's row, with the create's answer, is inserted in the create's own write transaction, so it exists
// exactly when the document does and always holds the first answer: a retry after a crash between the commit and the
// answer finds it and gets that answer, a retry after a rollback runs again, and two concurrent requests with one key
// make one document (the second's insert of the key conflicts, its transaction rolls back, and it answers as a retry).
// A retry with another body is 422. Keys belong to the user who sent them and live 24 hours.
//
// The create does not look the key up first: a retry runs the create, whose insert of the key conflicts, and answers
// from the row it then reads. That read cost a round trip per create (MariaDB) and a knex query (SQLite) for the sake of
// retries, which are rare; a retry pays instead a create that rolls back (its hooks run again inside the transaction;
// on MariaDB the creates that shared its batch run again alone). The key's row is one INSERT of the create's batch
// (the row store's insertRows): with the answer stored after the commit in a second transaction, and the create kept
// out of MariaDB's group commit, a create with a key ran at 0.45-0.53x (SQLite) and 0.17-0.20x (MariaDB) of one
// without; see docs/performance.md for the cost now.
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from '../db/migrate';
import { inWriteTransaction } from '../db/write-transaction';
import { BadRequestError, IdempotencyKeyReusedError } from '../errors/errors';
import type { AppContext } from '../http/state';
import type { Site } from '../site';
import { SitePlugin } from '../site';

/** The request header. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The answer header marking a replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key is remembered (ms). */
export const KEY_LIFETIME_MS = 24 * 3600 * 1000;
/** Expired keys are deleted at most this often per site (ms). */
const PURGE_EVERY_MS = 60_000;

/** A key as the client sent it: 1 to 255 visible ASCII characters, optionally as a quoted structured-field string. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** A request's key, scoped to its user, and the fingerprint of what it asks. */
export interface IdempotentRequest {
  /** SHA-256 of user and key: the row's id (a key never matches another user's). */
  id: string;
  /** SHA-256 of API version, DocType and body. */
  fingerprint: string;
}

/** A remembered key. */
export interface KeyRecord {
  fingerprint: string;
  doctype: string;
  docname: string;
  /** The first answer (status and JSON body); null when the process ended before it was stored. */
  status: number | null;
  body: string | null;
}

// One-shot: a createHash object per digest cost about 6 us, two per create.
const sha256 = (text: string) => hash('sha256', text, 'hex');

/**
 * The key of a create request, or undefined without the header; 400 for a malformed key, several keys, or a Guest
 * (whose keys would be shared by every anonymous client).
 */
export function idempotentRequest(
  ctx: AppContext,
  doctype: string,
  body: unknown,
): IdempotentRequest | undefined {
  const header = ctx.req.headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return undefined;
  // An IETF structured-field string ("...") or Stripe's bare token; a list (a comma) is several keys.
  const raw = typeof header === 'string' ? header.trim() : '';
  const key = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!KEY.test(key) || key.includes(',') || key.includes('"'))
    throw new BadRequestError('Idempotency-Key must be one key of 1 to 255 visible ASCII characters');
  const user = ctx.state.user.name;
  if (user === 'Guest') throw new BadRequestError('Idempotency-Key needs a signed-in user');
  return {
    id: sha256(`${user}\n${key}`),
    fingerprint: sha256(`${ctx.state.version}\n${doctype}\n${JSON.stringify(body)}`),
  };
}

/**
 * The live record of a key, if any (an expired one counts as none). `waitForWriter` (MariaDB, inside a transaction):
 * a locking read, which waits for a concurrent request that inserted the key to commit or roll back, and then sees
 * its row or none.
 */
export async function findKey(
  q: Knex,
  request: IdempotentRequest,
  waitForWriter = false,
): Promise<KeyRecord | undefined> {
  let query = q(SYSTEM_TABLES.idempotency)
    .where({ id: request.id })
    .andWhere('created_at', '>=', Date.now() - KEY_LIFETIME_MS);
  if (waitForWriter) query = query.forShare();
  const row = (await query.first('fingerprint', 'doctype', 'docname', 'status', 'body')) as
    KeyRecord | undefined;
  return row ? { ...row, status: row.status === null ? null : Number(row.status) } : undefined;
}

/** 422 unless the record was made by the same request. */
export function assertSameRequest(record: KeyRecord, request: IdempotentRequest): void {
  if (record.fingerprint !== request.fingerprint)
    throw new IdempotencyKeyReusedError(
      'This Idempotency-Key was used with a different request; use a new key for a new request',
    );
}

/**
 * Records the key and the create's first answer (`status`, `body`: its JSON text) inside the create's write transaction (`trx`). A
 * live row of the same id (a concurrent request with the key committed first) makes the insert fail, and the create
 * with it; so does an expired row of the same id not purged yet (createOnce then deletes it and runs again). The insert comes first: a delete of a row that is
 * not there would take a gap lock on MariaDB, and concurrent requests with one key would deadlock on those locks before
 * any of them had recorded it. In a batch of MariaDB's group commit the insert is held until the batch's COMMIT: a
 * conflict then rolls the batch back, and its creates run again alone, where the conflict shows here.
 */
export async function recordKey(
  site: Site,
  trx: Knex,
  request: IdempotentRequest,
  created: { doctype: string; docname: string; status: number; body: string },
): Promise<void> {
  const row = {
    id: request.id,
    fingerprint: request.fingerprint,
    doctype: created.doctype,
    docname: created.docname,
    status: created.status,
    body: created.body,
    created_at: Date.now(),
  };
  await site.rows.insertRows(trx, SYSTEM_TABLES.idempotency, [row]);
}

/**
 * Deletes the expired row of this request's key, if one is left (not purged yet), in a transaction of its own; true when
 * there was one. Called after a create whose key clashed: replacing the row inside the create's transaction cannot work
 * on PostgreSQL, where the failed insert has already ended that transaction.
 */
export async function forgetExpiredKey(site: Site, request: IdempotentRequest): Promise<boolean> {
  const deleted = await inWriteTransaction(site.db, (q) =>
    q(SYSTEM_TABLES.idempotency)
      .where({ id: request.id })
      .andWhere('created_at', '<', Date.now() - KEY_LIFETIME_MS)
      .delete(),
  );
  return Number(deleted) > 0;
}

/** When this process last purged the site's expired keys. */
const PURGES = new SitePlugin<{ last: number }>('idempotency purge', () => ({ last: 0 }));

/** Deletes the site's expired keys, at most once a minute; never fails the request. */
export function purgeExpiredKeys(site: Site): void {
  const now = Date.now();
  const purges = PURGES.of(site);
  if (now - purges.last < PURGE_EVERY_MS) return;
  purges.last = now;
  void inWriteTransaction(site.db, (q) =>
    q(SYSTEM_TABLES.idempotency)
      .where('created_at', '<', now - KEY_LIFETIME_MS)
      .delete(),
  ).catch(() => undefined);
}

/**
 * 400 when a request to any row but a document create carries Idempotency-Key: it would not make that request safe
 * to retry, and a client must not believe it does.
 */
export function refuseKeyOutsideCreate(ctx: AppContext, operation: string): void {
  if (operation !== 'create' && ctx.req.headers[IDEMPOTENCY_HEADER] !== undefined)
    throw new BadRequestError('Idempotency-Key is taken only by document creates (POST of a new document)');
}
