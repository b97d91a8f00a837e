// The fields of a DocType grouped as a write walks them, worked out once per DocType rather than on every write.
import { FIELD_TYPE_INFO, hasDataOption, isTableType, storesValue } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { DocTypeBinding, Registry } from './registry';

/** A default a new document takes: a fixed value, one that depends on the user or the clock, or no rows for a table. */
export type FieldDefault =
  | { field: FieldMeta; kind: 'fixed'; value: unknown }
  | { field: FieldMeta; kind: 'user' | 'today' | 'now' | 'rows' };

/** A field whose `fetch_from` names a Link or Dynamic Link of its DocType: `source` is the linked DocType's field. */
export interface FetchedField {
  field: FieldMeta;
  source: string;
}

/** A DocType's fields by the part they play in a write. */
export interface FieldLists {
  /** Fields with a column of their own. */
  stored: readonly FieldMeta[];
  /** What each unset `stored` field holds in its column (Frappe's get_valid_dict): 0 for numbers and Check, else null. */
  storedEmpty: readonly (0 | null)[];
  /** Table and Table MultiSelect fields. */
  tables: readonly FieldMeta[];
  /** Link and Dynamic Link fields. */
  links: readonly FieldMeta[];
  /** The fields a save fetches through each Link or Dynamic Link (by its fieldname); empty for most DocTypes. */
  fetches: ReadonlyMap<string, readonly FetchedField[]>;
  /** Mandatory fields and tables (whose rows may have mandatory fields), in field order. */
  mandatoryOrTables: readonly FieldMeta[];
  /** Stored fields whose value must be unique among the DocType's documents. */
  unique: readonly FieldMeta[];
  /** What each unset `unique` field holds in its column (as `storedEmpty`): an unset Int holds 0, a value too. */
  uniqueEmpty: readonly (0 | null)[];
  /** Password fields. */
  passwords: readonly FieldMeta[];
  /** Data fields whose options (Email, Phone, URL, Name) Frappe validates. */
  dataOptions: readonly FieldMeta[];
  /** In field order: the fields that have a default, and every table (no rows). */
  defaults: readonly FieldDefault[];
}

const EMPTY_AS_ZERO = new Set(['int', 'bigint', 'decimal', 'check']);

/** The default of a field that is not a table (Frappe's: `Today`, `Now`, `__user`, Check as 0/1, numbers as numbers). */
export function defaultOf(field: FieldMeta): FieldDefault | undefined {
  const raw = field.default;
  const value = FIELD_TYPE_INFO[field.fieldtype].value;
  if (raw === undefined) return value === 'check' ? { field, kind: 'fixed', value: 0 } : undefined;
  if (raw === '__user' || raw === 'user') return { field, kind: 'user' };
  if (value === 'date' && raw.toLowerCase() === 'today') return { field, kind: 'today' };
  if (value === 'datetime' && raw.toLowerCase() === 'now') return { field, kind: 'now' };
  if (value === 'check' || value === 'integer' || value === 'number') {
    const n = Number(raw);
    return Number.isFinite(n) ? { field, kind: 'fixed', value: n } : undefined;
  }
  if (field.fieldtype === 'Select' && field.selectOptions && !field.selectOptions.includes(raw))
    return undefined;
  return { field, kind: 'fixed', value: raw };
}

const emptyOf = (f: FieldMeta): 0 | null =>
  EMPTY_AS_ZERO.has(FIELD_TYPE_INFO[f.fieldtype].column) ? 0 : null;

/**
 * The stored fields whose `fetch_from` is `link.source` with `link` one of `links`, by link (field order kept). The
 * generator only warns about a fetch_from naming no Link: such a field fetches nothing, as in Frappe.
 */
function fetchesOf(stored: readonly FieldMeta[], links: readonly FieldMeta[]): Map<string, FetchedField[]> {
  const byLink = new Map<string, FetchedField[]>();
  for (const field of stored) {
    const [link, source, more] = field.fetchFrom?.trim().split('.') ?? [];
    if (!link || !source || more !== undefined || link === field.fieldname) continue;
    if (!links.some((l) => l.fieldname === link)) continue;
    byLink.set(link, [...(byLink.get(link) ?? []), { field, source }]);
  }
  return byLink;
}

function listFields(meta: DocTypeMeta): FieldLists {
  const stored = meta.fields.filter((f) => storesValue(f.fieldtype));
  const unique = stored.filter((f) => f.unique);
  const links = meta.fields.filter((f) => f.fieldtype === 'Link' || f.fieldtype === 'Dynamic Link');
  return {
    stored,
    storedEmpty: stored.map(emptyOf),
    tables: meta.fields.filter((f) => isTableType(f.fieldtype)),
    links,
    fetches: fetchesOf(stored, links),
    mandatoryOrTables: meta.fields.filter((f) => f.reqd || isTableType(f.fieldtype)),
    unique,
    uniqueEmpty: unique.map(emptyOf),
    passwords: meta.fields.filter((f) => f.fieldtype === 'Password'),
    dataOptions: meta.fields.filter(hasDataOption),
    defaults: meta.fields.flatMap((f) => {
      const found: FieldDefault | undefined = isTableType(f.fieldtype)
        ? { field: f, kind: 'rows' }
        : defaultOf(f);
      return found ? [found] : [];
    }),
  };
}

const lists = new WeakMap<DocTypeMeta, FieldLists>();

/** The field lists of `meta`. */
export function fieldLists(meta: DocTypeMeta): FieldLists {
  let found = lists.get(meta);
  if (!found) lists.set(meta, (found = listFields(meta)));
  return found;
}

/** A Table field whose child DocType the registry knows, with that DocType. */
export interface TableField {
  field: FieldMeta;
  child: DocTypeBinding;
}

const tablesByRegistry = new WeakMap<Registry, WeakMap<DocTypeMeta, readonly TableField[]>>();

/** The Table fields of `meta` whose child DocType is in `registry`. */
export function tableFields(meta: DocTypeMeta, registry: Registry): readonly TableField[] {
  let byMeta = tablesByRegistry.get(registry);
  if (!byMeta) tablesByRegistry.set(registry, (byMeta = new WeakMap()));
  let found = byMeta.get(meta);
  if (!found) {
    found = fieldLists(meta).tables.flatMap((field) => {
      const child = field.options ? registry.get(field.options) : undefined;
      return child ? [{ field, child }] : [];
    });
    byMeta.set(meta, found);
  }
  return found;
}
