// Who is asking: the site, the user and the API version. Every document and list operation takes one, so the same
// operation serves the REST routes, the frappe.client methods and server scripts.
import { DoesNotExistError, MethodNotAllowedError, PermissionError } from '../errors/errors';
import type { AppContext } from '../http/state';
import type { WriteBatch } from '../db/write-transaction';
import type { DocumentTransaction } from '../document/lifecycle';
import type { DocTypeBinding, V2Operation } from '../registry/registry';
import type { SessionUser, Site } from '../site';

/** The caller of an operation. */
export interface Caller {
  site: Site;
  user: SessionUser;
  /** The API version whose shapes the result takes (v1 drops nulls, v2 fills them). */
  version: 1 | 2;
  /**
   * The transaction the operation joins (a server script run by a document event): its writes and document reads run
   * inside it instead of a transaction of their own.
   */
  tx?: DocumentTransaction;
  /** The batch a new transaction of the operation joins as a savepoint (bulk items, where the backend batches them: Database.bulkWrites). */
  batch?: WriteBatch;
}

/** The caller of a request's operation: its site, user and API version. */
export function callerOf(ctx: AppContext): Caller {
  return { site: ctx.state.site, user: ctx.state.user, version: ctx.state.version };
}

/** Operations that read a DocType's rows as a list: Frappe refuses them on a child table without its parent (403). */
const LISTING: ReadonlySet<V2Operation> = new Set<V2Operation>(['list', 'count']);

/**
 * The DocType of the request, checked to answer the operation in the caller's API version (404 / 405 otherwise). A
 * child table listed or counted on its own is 403, as in Frappe (db_query's parent check: its rows are read through the
 * parent document; listing them with `parent=<DocType>` is runtime/permissions/child-access.ts).
 */
export function bindingFor(caller: Caller, doctype: string, op: V2Operation): DocTypeBinding {
  const binding = caller.site.registry.get(doctype);
  if (binding?.meta.istable && LISTING.has(op))
    throw new PermissionError(`${doctype} is a child table: its rows are read through their parent document`);
  const ops: ReadonlySet<string> | undefined = caller.version === 1 ? binding?.v1Ops : binding?.v2Ops;
  if (!binding || !ops || ops.size === 0)
    throw new DoesNotExistError(`DocType ${doctype.slice(0, 140)} not found`);
  if (!ops.has(op)) throw new MethodNotAllowedError(`${op} is not allowed on ${doctype}`);
  return binding;
}
