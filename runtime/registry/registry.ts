// The DocType registry: generated modules bound together and looked up by DocType name through a map.
import type { Model } from 'objection';
import type { DocTypeMeta } from '../meta/types';

/** A v1 operation a DocType may answer. */
export type V1Operation = 'list' | 'create' | 'get' | 'update' | 'delete';
/** A v2 operation a DocType may answer. */
export type V2Operation =
  V1Operation | 'copy' | 'count' | 'meta' | 'bulk_update' | 'bulk_delete' | 'bulk_insert' | 'export';

/** An ajv standalone validator: coerces and strips the body in place, sets `errors` on failure. */
export interface BodyValidator {
  (data: unknown): boolean;
  errors?:
    { instancePath: string; message?: string; keyword: string; params?: Record<string, unknown> }[] | null;
}

/** A controller module: its default export extends Document; other exports may be whitelisted functions. */
export type ControllerModule = Record<string, unknown> & { default?: unknown };

/** A whitelisted method or function as the generator found it: its argument validator and where it lives. */
export interface MethodEntry {
  /** `function`: a module export of the controller file; `document`: a method of the controller class. */
  kind: 'function' | 'document';
  name: string;
  /** Dotted path (`widgets.widget.widget.stock`): the canonical name and rate-limit bucket. */
  path: string;
  /** Validates, coerces and strips the argument object in place. */
  validate: BodyValidator;
  /** Arguments that may arrive as JSON text in a query string or form. */
  jsonArgs: readonly string[];
}

/**
 * A route of a DocType's generated route module, as the registry reads it: the route table's row it serves (typed in
 * full by runtime/routes/doctype-routes.ts) and, where the body carries documents, the DocType's validator.
 */
export interface ServedRoute {
  readonly row: { readonly operation: string; readonly doctypeOperation?: V2Operation };
  readonly validate?: BodyValidator;
}

/** The routes a DocType serves in one API version (`routes` of generated/routes/v1|v2/<slug>.ts), by row key. */
export type ServedRoutes = Readonly<Record<string, ServedRoute>>;

/** What the generator emits for one DocType. */
export interface DocTypeEntry {
  meta: DocTypeMeta;
  model: typeof Model;
  /** Validates (coerces and strips, in place) a create or update body: both have one schema. */
  validateBody: BodyValidator;
  /** The REST v1 routes the DocType serves (its generated module's `routes`). */
  v1: ServedRoutes;
  /** The REST v2 routes the DocType serves. */
  v2: ServedRoutes;
  controller?: ControllerModule;
  /** Whitelisted methods found in the controller. */
  methods?: readonly MethodEntry[];
}

/** A DocType with its operations as sets, ready for dispatch. */
export interface DocTypeBinding extends DocTypeEntry {
  /** The DocType operations of its v1 routes (what `bindingFor` lets through). */
  v1Ops: ReadonlySet<V2Operation>;
  /** The DocType operations of its v2 routes. */
  v2Ops: ReadonlySet<V2Operation>;
  /** Fields by name. */
  fieldMap: ReadonlyMap<string, DocTypeMeta['fields'][number]>;
}

/** All DocTypes of a service. */
export interface Registry {
  get(name: string): DocTypeBinding | undefined;
  all(): DocTypeBinding[];
}

/** The DocType operations of a module's routes; a route filed under another row's key is a stale or edited module. */
function operationsOf(name: string, version: 1 | 2, routes: ServedRoutes): Set<V2Operation> {
  const ops = new Set<V2Operation>();
  for (const key in routes) {
    const row = (routes[key] as ServedRoute).row;
    if ((row.doctypeOperation ?? row.operation) !== key)
      throw new Error(`${name}: its v${version} route ${key} serves another row: run \`npm run generate\``);
    if (row.doctypeOperation) ops.add(row.doctypeOperation);
  }
  return ops;
}

/** Builds the registry from the generated entries. */
export function createRegistry(entries: DocTypeEntry[]): Registry {
  const byName = new Map<string, DocTypeBinding>();
  for (const entry of entries) {
    byName.set(entry.meta.name, {
      ...entry,
      v1Ops: operationsOf(entry.meta.name, 1, entry.v1),
      v2Ops: operationsOf(entry.meta.name, 2, entry.v2),
      fieldMap: new Map(entry.meta.fields.map((f) => [f.fieldname, f])),
    });
  }
  const list = [...byName.values()];
  return { get: (name) => byName.get(name), all: () => list };
}
