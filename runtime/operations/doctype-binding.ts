// The DocType an operation names, checked against what it answers in the caller's API version.
import type { Caller } from '../document/caller';
import { DoesNotExistError, MethodNotAllowedError, PermissionError } from '../errors/errors';
import type { DocTypeBinding, V2Operation } from '../registry/registry';

/** Operations that read a DocType's rows as a list: Frappe refuses them on a child table without its parent (403). */
const LISTING: ReadonlySet<V2Operation> = new Set<V2Operation>(['list', 'count', 'export']);

/**
 * The DocType of the request, checked to answer the operation in the caller's API version (404 / 405 otherwise). A
 * child table listed or counted on its own is 403, as in Frappe (db_query's parent check: its rows are read through the
 * parent document; listing them with `parent=<DocType>` is runtime/permissions/child-access.ts); so is any other
 * operation on one of its rows (a row is read, changed, added and removed through its parent: child-rows.ts, which
 * document-operations.ts reaches before this).
 */
export function bindingFor(caller: Caller, doctype: string, op: V2Operation): DocTypeBinding {
  const binding = caller.site.registry.get(doctype);
  if (binding?.meta.istable && LISTING.has(op))
    throw new PermissionError(`${doctype} is a child table: its rows are read through their parent document`);
  // Copy, submit, cancel, bulk writes of rows: 403 saying why, not a 404 for a DocType that exists.
  if (binding?.meta.istable && op !== 'meta')
    throw new PermissionError(
      `${doctype} is a child table: its rows are read and written through their parent document`,
    );
  const ops: ReadonlySet<string> | undefined = caller.version === 1 ? binding?.v1Ops : binding?.v2Ops;
  if (!binding || !ops || ops.size === 0)
    throw new DoesNotExistError(`DocType ${doctype.slice(0, 140)} not found`);
  if (!ops.has(op))
    throw new MethodNotAllowedError(`${op} is not allowed on ${doctype}`, {
      headers: { Allow: allowedVerbs(caller.version, ops, op) },
    });
  return binding;
}

/** The verbs of each document operation (v1 has no PATCH). */
const VERBS: Partial<Record<V2Operation, readonly string[]>> = {
  list: ['GET'],
  create: ['POST'],
  get: ['GET'],
  update: ['PUT', 'PATCH'],
  delete: ['DELETE'],
};

/** The operations served on the same path as each (the collection, or one document). */
const SAME_PATH: Partial<Record<V2Operation, readonly V2Operation[]>> = {
  list: ['list', 'create'],
  create: ['list', 'create'],
  get: ['get', 'update', 'delete'],
  update: ['get', 'update', 'delete'],
  delete: ['get', 'update', 'delete'],
};

/** The `Allow` of a 405 for `op`: the verbs of the operations on its path the DocType has (empty: none, as a Single's list). */
function allowedVerbs(version: 1 | 2, ops: ReadonlySet<string>, op: V2Operation): string {
  const verbs = new Set<string>();
  for (const mate of SAME_PATH[op] ?? [])
    if (ops.has(mate))
      for (const verb of VERBS[mate] ?? []) if (version === 2 || verb !== 'PATCH') verbs.add(verb);
  return [...verbs].join(', ');
}
