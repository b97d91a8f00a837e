// The DocType an operation names, checked against what it answers in the caller's API version.
import type { Caller } from '../document/caller';
import { DoesNotExistError, MethodNotAllowedError, PermissionError } from '../errors/errors';
import type { DocTypeBinding, V2Operation } from '../registry/registry';

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
