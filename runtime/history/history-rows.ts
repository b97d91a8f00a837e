// The rows the history feature writes beside a document, in the document's own transaction: a Version and a Deleted
// Document are inserted as rows (no lifecycle of their own: they are the service's record, not a user's write).
import type { Knex } from 'knex';
import type { DocumentTransaction } from '../document/lifecycle';
import { timeOrderedName } from '../document/naming';
import { serviceStamps } from '../document/service-row';
import type { DocData } from '../db/row-store';
import { DoesNotExistError } from '../errors/errors';
import type { DocTypeBinding } from '../registry/registry';

/** The DocType of a document's versions. */
export const VERSION = 'Version';
/** The DocType of a deleted document's copy. */
export const DELETED_DOCUMENT = 'Deleted Document';

/** The binding of a history DocType; a registry without it is a build error, not a user's. */
export function historyBinding(tx: { site: DocumentTransaction['site'] }, doctype: string): DocTypeBinding {
  const binding = tx.site.registry.get(doctype);
  if (!binding) throw new DoesNotExistError(`DocType ${doctype} not found`);
  return binding;
}

/** Inserts a history row of `doctype` holding `values`, owned by the transaction's user, in `trx`. */
export async function insertHistoryRow(
  tx: DocumentTransaction,
  trx: Knex,
  doctype: string,
  values: DocData,
): Promise<void> {
  const data: DocData = { name: timeOrderedName(), ...serviceStamps(tx.user.name), ...values };
  await tx.site.rows.insert(trx, historyBinding(tx, doctype), data);
  tx.markWritten(doctype);
}

/**
 * The stored copy of the document `doctype`/`name` its latest Deleted Document keeps (what an event about its delete is
 * checked against: the row is gone); undefined when there is none or it holds no document.
 */
export async function latestDeletedCopy(
  site: DocumentTransaction['site'],
  doctype: string,
  name: string,
): Promise<DocData | undefined> {
  const binding = site.registry.get(DELETED_DOCUMENT);
  if (!binding) return undefined;
  const row = (await site.db
    .knex(binding.meta.tableName)
    .where({ deleted_doctype: doctype, deleted_name: name })
    .orderBy([
      { column: 'creation', order: 'desc' },
      { column: 'name', order: 'desc' },
    ])
    .first('data')) as { data: unknown } | undefined;
  return row && storedCopy(row.data);
}

/** The document a Deleted Document's `data` holds (JSON text); undefined when it holds none. */
export function storedCopy(data: unknown): DocData | undefined {
  try {
    const copy: unknown = JSON.parse(String(data));
    return copy && typeof copy === 'object' && !Array.isArray(copy) ? (copy as DocData) : undefined;
  } catch {
    return undefined;
  }
}
