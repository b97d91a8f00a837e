// The create route with Idempotency-Key (see idempotency-keys.ts): the first request creates and records its key in
// the same transaction; a retry gets the first answer (`Idempotent-Replayed: true`), a different body 422.
import type { AppContext } from '../http/state';
import type { DocumentResult, InTransaction } from '../operations/document-operations';
import * as documents from '../operations/document-operations';
import { callerOf } from '../http/caller-of';
import { inWriteTransaction } from '../db/write-transaction';
import {
  REPLAYED_HEADER,
  assertSameRequest,
  findKey,
  idempotentRequest,
  purgeExpiredKeys,
  recordKey,
  storeAnswer,
  type IdempotentRequest,
  type KeyRecord,
} from './idempotency-keys';

/** Answers a retry: the stored first answer, or (the process ended before storing it) the document as it is now. */
async function replay(
  ctx: AppContext,
  record: KeyRecord,
  request: IdempotentRequest,
  answer: Answer,
): Promise<void> {
  assertSameRequest(record, request);
  if (record.status !== null && record.body !== null) {
    ctx.status = record.status;
    ctx.body = JSON.parse(record.body) as unknown;
  } else {
    answer(await documents.getDocument(callerOf(ctx), record.doctype, record.docname), []);
  }
  ctx.set(REPLAYED_HEADER, 'true');
}

/** Sets the create's answer from a document and messages; returns the body it set. */
export type Answer = (doc: unknown, messages: string[]) => Record<string, unknown>;

/**
 * Creates a document of `doctype` from `body` through `create` (given the hook to run inside its transaction) and
 * answers through `answer`; with an Idempotency-Key, at most once per key.
 */
export async function createOnce(
  ctx: AppContext,
  doctype: string,
  body: Record<string, unknown>,
  create: (inTransaction?: InTransaction) => Promise<DocumentResult>,
  answer: Answer,
): Promise<void> {
  const request = idempotentRequest(ctx, doctype, body);
  if (!request) {
    const { doc, messages } = await create();
    answer(doc, messages);
    return;
  }
  const { site } = ctx.state;
  purgeExpiredKeys(site);
  const known = await findKey(site.db.knex, request);
  if (known) return replay(ctx, known, request, answer);
  let result: DocumentResult;
  try {
    result = await create((trx, name) => recordKey(trx, request, doctype, name));
  } catch (err) {
    // A concurrent request with the key committed first: this one rolled back, and answers as its retry.
    const raced = await findKey(site.db.knex, request).catch(() => undefined);
    if (raced) return replay(ctx, raced, request, answer);
    throw err;
  }
  const sent = answer(result.doc, result.messages);
  const status = ctx.status;
  await inWriteTransaction(site.db, (q) => storeAnswer(q, request, status, sent)).catch(() => undefined);
}
