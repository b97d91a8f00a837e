// The routes a DocType serves, as its generated module lists them (generated/routes/v1|v2/<slug>.ts): each names a
// DocType row of the route table by key. The router dispatches a DocType's request to the route its module lists, found
// through the registry's map and the module's keys (no scan); a row the module does not list keeps the table's row,
// whose operation answers as for any operation the DocType lacks (bindingFor: 404, 405, or 403 for a child table).
import type { BodyValidator, DocTypeBinding, Registry } from '../registry/registry';
import {
  DOCTYPE_OPERATIONS,
  docTypeRouteKey,
  type DocTypeRouteKey,
  type RouteMatch,
  type RouteRow,
} from '../http/route-row';
import { ROUTE_TABLE } from './route-table';

/** A route a DocType serves: a DocType row of the route table and, where the body carries documents, its validator. */
export interface DocTypeRoute {
  readonly row: RouteRow;
  /** The DocType's generated validator of the documents the body carries (create, update, bulk insert/update). */
  readonly validate?: BodyValidator;
}

/**
 * The routes a DocType serves in one API version, by key. `R` is the module's `Routes` interface (each route's request
 * and response in the DocType's generated types): a module lists exactly the routes it types.
 */
export type DocTypeRoutes<R = Record<string, unknown>> = { readonly [K in keyof R]: DocTypeRoute };

/** The keys of the v1 DocType rows. */
const V1_KEYS = ['list', 'create', 'get', 'documentMethod', 'update', 'delete'] as const;
/** The keys of the v2 DocType rows. */
const V2_KEYS = [...DOCTYPE_OPERATIONS, 'documentMethod'] as const;

/** The DocType rows of an API version (not the `/api/v1` aliases) by key: exactly `keys`, each once, or it throws. */
function rowsByKey<K extends DocTypeRouteKey>(
  version: 1 | 2,
  keys: readonly K[],
): Readonly<Record<K, RouteRow>> {
  const rows: Partial<Record<string, RouteRow>> = {};
  for (const row of ROUTE_TABLE) {
    if (!row.kinds || row.alias || !row.openapi.includes(version)) continue;
    const key = docTypeRouteKey(row);
    if (rows[key] || !(keys as readonly string[]).includes(key))
      throw new Error(`Route table: v${version} DocType row ${key} is twice or not among ${keys.join(', ')}`);
    rows[key] = row;
  }
  const missing = keys.filter((key) => !rows[key]);
  if (missing.length) throw new Error(`Route table: no v${version} DocType row for ${missing.join(', ')}`);
  return rows as Record<K, RouteRow>;
}

/** The DocType rows of each API version by key: what generated route modules name (`DOCTYPE_ROWS.v2.get`). */
export const DOCTYPE_ROWS = { v1: rowsByKey(1, V1_KEYS), v2: rowsByKey(2, V2_KEYS) } as const;

/**
 * Gives a DocType row's match the row of the DocType's generated route (the router runs it, CSRF and scopes read it);
 * a DocType unknown or whose module does not list the row keeps the table's row. Two map look-ups, whatever the
 * number of DocTypes.
 */
export function serveDocTypeRoute(registry: Registry, version: 1 | 2, match: RouteMatch): RouteMatch {
  const binding = registry.get(match.params.doctype);
  const route = binding && (version === 1 ? binding.v1 : binding.v2)[docTypeRouteKey(match.row)];
  // The registry holds the module's routes by the shape it checks; their rows are the table's rows (DOCTYPE_ROWS).
  if (route) match.row = route.row as RouteRow;
  return match;
}

/**
 * Whether a DocType row's match counts towards the `Allow` of a 405 on its path. For a DocType that answers in `version`:
 * when it serves the row (its route module lists it), so a Single's collection path allows nothing and its document
 * path GET and PUT. For a name no DocType here answers to: every row of the path, as Frappe's router, which knows no
 * DocType. Never v1's document method, a POST that needs `run_method` (a POST of the document's path without it is 405
 * too).
 */
export function allowsRow(registry: Registry, version: 1 | 2, match: RouteMatch): boolean {
  const { row } = match;
  if (row.operation === 'documentMethod' && !row.path.includes('{method}')) return false;
  const binding = registry.get(match.params.doctype);
  const routes =
    binding && answersIn(binding, version) ? (version === 1 ? binding.v1 : binding.v2) : undefined;
  return routes === undefined || routes[docTypeRouteKey(row)] !== undefined;
}

/** Whether `binding` answers anything in `version` (a child table answers nothing on its own: 404, as bindingFor). */
export function answersIn(binding: DocTypeBinding | undefined, version: 1 | 2): boolean {
  return (version === 1 ? binding?.v1Ops : binding?.v2Ops)?.size ? true : false;
}

/**
 * The `Allow` of a 405 on the path of the DocType row `key` for `doctype` when the request matched no row there: the
 * verbs of the rows on that path that count (allowsRow), in table order.
 */
export function allowedOnPath(
  registry: Registry,
  version: 1 | 2,
  key: DocTypeRouteKey,
  doctype: string,
): string {
  const rows: Readonly<Record<string, RouteRow>> = version === 1 ? DOCTYPE_ROWS.v1 : DOCTYPE_ROWS.v2;
  const template = rows[key]?.path;
  const verbs = new Set<string>();
  for (const row of Object.values(rows))
    if (
      row.path === template &&
      row.verbs !== '*' &&
      allowsRow(registry, version, { row, params: { doctype, name: '', method: '' } })
    )
      for (const verb of row.verbs) verbs.add(verb);
  return [...verbs].join(', ');
}
