// Normalize phase: turn checked Frappe DocType JSON into DocTypeMeta, the one IR every emitter reads.
import { FIELD_TYPE_INFO, isFieldType, isTableType, storesValue } from '../runtime/meta/field-types';
import {
  CHILD_FIELDS,
  RIGHTS,
  STANDARD_FIELDS,
  type DocTypeMeta,
  type FieldMeta,
  type NamingRule,
  type PermissionMeta,
} from '../runtime/meta/types';
import { scrub } from './naming';
import type { LoadedDocType } from './load-doctypes';

/** A DocType ready for the emitters: its metadata plus where it came from. */
export interface DocTypeIR {
  meta: DocTypeMeta;
  /** The loaded file (for headers, controller and dotted paths). */
  loaded: LoadedDocType;
}

type Raw = Record<string, unknown>;

export { CHILD_FIELDS, STANDARD_FIELDS };

const flag = (value: unknown): boolean => value === 1 || value === true || value === '1';
const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/** Frappe's autoname string (plus naming_rule) as one closed rule. */
export function parseNaming(autoname: unknown, namingRule: unknown): NamingRule {
  const raw = typeof autoname === 'string' ? autoname.trim() : '';
  const lower = raw.toLowerCase();
  if (lower === 'hash') return { kind: 'hash' };
  if (lower === 'autoincrement') return { kind: 'autoincrement' };
  if (lower === 'prompt') return { kind: 'prompt' };
  if (lower === 'uuid') return { kind: 'uuid' };
  if (lower.startsWith('field:')) return { kind: 'field', fieldname: raw.slice(6).trim() };
  if (lower.startsWith('naming_series:')) return { kind: 'naming_series' };
  if (lower.startsWith('format:')) return { kind: 'format', pattern: raw.slice(7) };
  if (raw.includes('#')) return { kind: 'series', pattern: raw };
  if (namingRule === 'Set by user') return { kind: 'prompt' };
  if (namingRule === 'Autoincrement') return { kind: 'autoincrement' };
  if (namingRule === 'By script') return { kind: 'script' };
  return { kind: 'hash' };
}

function normalizeField(raw: Raw): FieldMeta | undefined {
  const fieldtype = raw.fieldtype ?? 'Data';
  const fieldname = str(raw.fieldname);
  if (!isFieldType(fieldtype) || !fieldname) return undefined;
  const options = str(raw.options);
  const field: FieldMeta = {
    fieldname,
    fieldtype,
    label: str(raw.label) ?? fieldname,
    reqd: flag(raw.reqd),
    unique: flag(raw.unique),
    readOnly: flag(raw.read_only),
    hidden: flag(raw.hidden),
    permlevel: typeof raw.permlevel === 'number' ? raw.permlevel : 0,
    noCopy: flag(raw.no_copy),
    allowOnSubmit: flag(raw.allow_on_submit),
    setOnlyOnce: flag(raw.set_only_once),
    nonNegative: flag(raw.non_negative),
    searchIndex: flag(raw.search_index),
    ignoreUserPermissions: flag(raw.ignore_user_permissions),
  };
  if (options) field.options = options.trim();
  if (fieldtype === 'Select' && options) field.selectOptions = options.split('\n').map((o) => o.trim());
  if (raw.default !== undefined && raw.default !== null && raw.default !== '')
    field.default = String(raw.default);
  if (typeof raw.length === 'number' && raw.length > 0) field.length = raw.length;
  const fetchFrom = str(raw.fetch_from);
  if (fetchFrom) field.fetchFrom = fetchFrom;
  if (fetchFrom && flag(raw.fetch_if_empty)) field.fetchIfEmpty = true;
  return field;
}

function normalizePermission(raw: Raw): PermissionMeta {
  return {
    role: String(raw.role),
    permlevel: typeof raw.permlevel === 'number' ? raw.permlevel : 0,
    ifOwner: flag(raw.if_owner),
    rights: RIGHTS.filter((right) => flag(raw[right])),
  };
}

/** Builds the IR of one checked DocType file. */
export function normalizeDocType(loaded: LoadedDocType): DocTypeIR {
  const raw = loaded.json as Raw;
  const name = String(raw.name);
  const istable = flag(raw.istable);
  const standard = new Set<string>([...STANDARD_FIELDS, ...(istable ? CHILD_FIELDS : [])]);
  const fields = (Array.isArray(raw.fields) ? (raw.fields as Raw[]) : [])
    .map(normalizeField)
    .filter((f): f is FieldMeta => f !== undefined && FIELD_TYPE_INFO[f.fieldtype].column !== 'none')
    // A field redeclaring a standard column (validation warned) is the standard column.
    .filter((f) => !standard.has(f.fieldname));
  const sortOrder = String(raw.sort_order ?? 'DESC').toLowerCase() === 'asc' ? 'asc' : 'desc';
  const meta: DocTypeMeta = {
    name,
    module: str(raw.module) ?? 'Core',
    slug: scrub(name),
    tableName: `tab${name}`,
    istable,
    issingle: flag(raw.issingle),
    isSubmittable: flag(raw.is_submittable),
    isVirtual: flag(raw.is_virtual),
    isTree: flag(raw.is_tree),
    naming: parseNaming(raw.autoname, raw.naming_rule),
    sortField: str(raw.sort_field) ?? 'creation',
    sortOrder,
    fields,
    permissions: (Array.isArray(raw.permissions) ? (raw.permissions as Raw[]) : []).map(normalizePermission),
    source: loaded.relative,
  };
  const titleField = str(raw.title_field);
  if (titleField) meta.titleField = titleField;
  // Only fields of this DocType that hold a value (a misspelt or layout name is left out, as it could match nothing).
  const searchable = new Set(
    fields.filter((f) => storesValue(f.fieldtype) && !isTableType(f.fieldtype)).map((f) => f.fieldname),
  );
  const searchFields = [...new Set((str(raw.search_fields) ?? '').split(',').map((f) => f.trim()))].filter(
    (f) => searchable.has(f),
  );
  if (searchFields.length) meta.searchFields = searchFields;
  if (flag(raw.track_changes)) meta.trackChanges = true;
  if (flag(raw.allow_import)) meta.allowImport = true;
  return { meta, loaded };
}

/**
 * Normalize phase: every DocType, sorted by name so output order never depends on the file system.
 * When two roots define the same DocType (validation warned), the first file in path order wins.
 */
export function normalizeDocTypes(docs: LoadedDocType[]): DocTypeIR[] {
  const byName = new Map<string, DocTypeIR>();
  for (const ir of docs.map(normalizeDocType)) if (!byName.has(ir.meta.name)) byName.set(ir.meta.name, ir);
  return [...byName.values()].sort((a, b) =>
    a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0,
  );
}

/** Fields that hold a value in the DocType's own table. */
export function valueFields(meta: DocTypeMeta): FieldMeta[] {
  return meta.fields.filter((f) => storesValue(f.fieldtype));
}
