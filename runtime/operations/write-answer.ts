// What a document write runs in and answers with: the transaction an operation uses (the caller's, or its own), the
// work a caller runs inside it (InTransaction), and the answer built from what was written, shared by the document
// operations (document-operations.ts) and the child-row writes that save a parent (child-row-writes.ts).
import type { Knex } from 'knex';
import type { Caller } from '../document/caller';
import type { Document } from '../document/document';
import { DocumentTransaction } from '../document/lifecycle';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import { readableDoc } from '../permissions/field-levels';
import type { DocTypeBinding } from '../registry/registry';
import { rowNamed, rowsAt, type RowPlace } from './child-rows';

/**
 * Work to run inside a write's own transaction, after the write and before the commit (a background job records the
 * item's outcome there, an Idempotency-Key its first answer, so the write and that record are durable together or not
 * at all). `result` (creates) is the operation's answer as it will be returned: the serialized document and messages.
 */
export type InTransaction = ((trx: Knex, name: string, result?: () => DocumentResult) => Promise<void>) & {
  /**
   * The work only inserts new rows and fails only by a duplicate key: the create may then share its transaction with
   * other creates (MariaDB's group commit), as one without the work does.
   */
  insertsOnly?: boolean;
};

/** A document with the messages for the user that producing it left. */
export interface DocumentResult {
  doc: DocData;
  messages: string[];
}

/** The transaction an operation runs in: the caller's when it joins one, else a new one (in the caller's batch, if any). */
export function transactionFor(caller: Caller): DocumentTransaction {
  if (caller.tx) return caller.tx;
  const tx = new DocumentTransaction(caller.site, caller.user);
  if (caller.batch) tx.batch = caller.batch;
  if (caller.flags) Object.assign(tx.flags, caller.flags);
  return tx;
}

/** A written document with the messages for the user that writing it left (not yet serialized). */
export interface Written {
  binding: DocTypeBinding;
  doc: Document;
  messages: string[];
  /** For a child row written through its parent (`doc`): the row, which the answer is. */
  row?: WrittenRow;
}

/** A child row written by saving its parent. */
export interface WrittenRow {
  child: DocTypeBinding;
  place: RowPlace;
  name: string;
}

/**
 * The response document of a write: serialized for the caller's API version, fields it may not read left out; for a
 * child row, the row as its parent's answer holds it, unless `whole` (frappe.client answers the parent).
 */
export function answer(
  caller: Caller,
  { binding, doc, messages, row }: Written,
  whole = false,
): DocumentResult {
  const out = readableDoc(
    caller,
    binding,
    serializeDoc(binding, caller.site.registry, doc, caller.documentShape ?? caller.version),
  );
  if (!row || whole) return { doc: out, messages };
  return { doc: rowNamed(rowsAt(out, row.place, row.child), row.name, row.child), messages };
}
