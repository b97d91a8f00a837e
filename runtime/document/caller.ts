// Who is asking: the site, the user and the API version. Every document and list operation takes one, so the same
// operation serves the REST routes, the frappe.client methods and server scripts. A core type: the document, query and
// permission code below the operations read it too (docs/architecture.md, "Layers").
import type { WriteBatch } from '../db/write-transaction';
import type { SessionUser, Site } from '../site';
import type { DocumentTransaction, TransactionFlags } from './lifecycle';

/** The caller of an operation. */
export interface Caller {
  site: Site;
  user: SessionUser;
  /** The API version whose shapes the result takes (v1 drops nulls, v2 fills them). */
  version: 1 | 2;
  /**
   * The shape of the documents answered when it is not the version's: frappe.client's methods take v1's parameters and
   * answer Frappe's `doc.as_dict()`, nulls kept (2).
   */
  documentShape?: 1 | 2;
  /**
   * The transaction the operation joins (a server script run by a document event): its writes and document reads run
   * inside it instead of a transaction of their own.
   */
  tx?: DocumentTransaction;
  /**
   * The batch a new transaction of the operation joins as a savepoint (bulk items, where the backend batches them:
   * Database.bulkWrites).
   */
  batch?: WriteBatch;
  /** Marks the transactions the operation opens carry (an import's: webhooks do not fire for them). */
  flags?: TransactionFlags;
}
