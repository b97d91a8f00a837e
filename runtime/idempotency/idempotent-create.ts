// The create route with Idempotency-Key (see idempotency-keys.ts): the first request creates and records its key with
// its answer in the same transaction; a retry gets that answer (`Idempotent-Replayed: true`), a different body 422.
import type { AppContext } from '../http/state';
import type { DocumentResult, InTransaction } from '../operations/document-operations';
import * as documents from '../operations/document-operations';
import { callerOf } from '../http/caller-of';
import {
  REPLAYED_HEADER,
  assertSameRequest,
  findKey,
  forgetExpiredKey,
  idempotentRequest,
  purgeExpiredKeys,
  recordKey,
  type IdempotentRequest,
  type KeyRecord,
} from './idempotency-keys';

/** How the route answers a create. */
export interface CreateAnswer {
  /** The success status. */
  status: number;
  /** The response body for a created document and the messages its hooks left. */
  bodyOf(doc: unknown, messages: string[]): Record<string, unknown>;
  /** Sends a body (or its JSON text) with the success status. */
  send(body: Record<string, unknown> | string): void;
}

/**
 * Answers a retry: the stored first answer, or (a key recorded before answers were stored with it) the document as it
 * is now.
 */
async function replay(
  ctx: AppContext,
  record: KeyRecord,
  request: IdempotentRequest,
  answer: CreateAnswer,
): Promise<void> {
  assertSameRequest(record, request);
  if (record.status !== null && record.body !== null) {
    ctx.status = record.status;
    ctx.body = JSON.parse(record.body) as unknown;
  } else {
    answer.send(
      answer.bodyOf(await documents.getDocument(callerOf(ctx), record.doctype, record.docname), []),
    );
  }
  ctx.set(REPLAYED_HEADER, 'true');
}

/**
 * Creates a document of `doctype` from `body` through `create` (given the work to run inside its transaction) and
 * answers through `answer`; with an Idempotency-Key, at most once per key.
 */
export async function createOnce(
  ctx: AppContext,
  doctype: string,
  body: Record<string, unknown>,
  create: (inTransaction?: InTransaction) => Promise<DocumentResult>,
  answer: CreateAnswer,
): Promise<void> {
  const request = idempotentRequest(ctx, doctype, body);
  if (!request) {
    const { doc, messages } = await create();
    answer.send(answer.bodyOf(doc, messages));
    return;
  }
  const { site } = ctx.state;
  purgeExpiredKeys(site);
  // The answer's JSON text as recorded with the key (the last run's: on MariaDB a create may run again alone); sent as
  // it is, so that it is encoded once.
  let sent: string | undefined;
  const record: InTransaction = async (trx, docname, result) => {
    const { doc, messages } = (result as () => DocumentResult)();
    sent = JSON.stringify(answer.bodyOf(doc, messages));
    await recordKey(site, trx, request, { doctype, docname, status: answer.status, body: sent });
  };
  record.insertsOnly = true;
  let created: DocumentResult;
  try {
    created = await create(record);
  } catch (err) {
    // The key is recorded (a retry, or a concurrent request with the key committed first): this create rolled back,
    // and answers as a retry. An expired row of the key, not purged yet, is deleted and the create runs again. Else the
    // create failed on its own: a retry runs it again.
    const known = await findKey(site.db.knex, request).catch(() => undefined);
    if (known) return replay(ctx, known, request, answer);
    if (!(await forgetExpiredKey(site, request).catch(() => false))) throw err;
    created = await create(record);
  }
  answer.send(sent ?? answer.bodyOf(created.doc, created.messages));
}
