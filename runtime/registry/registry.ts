// The DocType registry: generated modules bound together and looked up by DocType name through a map.
import type { Model } from 'objection';
import type { DocTypeMeta } from '../meta/types';

/** A v1 operation a DocType may answer. */
export type V1Operation = 'list' | 'create' | 'get' | 'update' | 'delete';
/** A v2 operation a DocType may answer. */
export type V2Operation =
  V1Operation | 'copy' | 'count' | 'meta' | 'bulk_update' | 'bulk_delete' | 'bulk_insert';

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

/** What the generator emits for one DocType. */
export interface DocTypeEntry {
  meta: DocTypeMeta;
  model: typeof Model;
  /** Validates (coerces and strips, in place) a create or update body: both have one schema. */
  validateBody: BodyValidator;
  v1: readonly V1Operation[];
  v2: readonly V2Operation[];
  controller?: ControllerModule;
  /** Whitelisted methods found in the controller. */
  methods?: readonly MethodEntry[];
}

/** A DocType with its operations as sets, ready for dispatch. */
export interface DocTypeBinding extends DocTypeEntry {
  v1Ops: ReadonlySet<V1Operation>;
  v2Ops: ReadonlySet<V2Operation>;
  /** Fields by name. */
  fieldMap: ReadonlyMap<string, DocTypeMeta['fields'][number]>;
}

/** All DocTypes of a service. */
export interface Registry {
  get(name: string): DocTypeBinding | undefined;
  all(): DocTypeBinding[];
}

/** Builds the registry from the generated entries. */
export function createRegistry(entries: DocTypeEntry[]): Registry {
  const byName = new Map<string, DocTypeBinding>();
  for (const entry of entries) {
    byName.set(entry.meta.name, {
      ...entry,
      v1Ops: new Set(entry.v1),
      v2Ops: new Set(entry.v2),
      fieldMap: new Map(entry.meta.fields.map((f) => [f.fieldname, f])),
    });
  }
  const list = [...byName.values()];
  return { get: (name) => byName.get(name), all: () => list };
}
