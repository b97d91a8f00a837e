// Normalized DocType metadata: the generator's IR and the runtime's view of a DocType, one shape for both.
import type { FieldType } from './field-types';

/** The rights a DocPerm row may grant. */
export const RIGHTS = [
  'select',
  'read',
  'write',
  'create',
  'delete',
  'submit',
  'cancel',
  'amend',
  'report',
  'export',
  'import',
  'share',
  'print',
  'email',
] as const;

/** One right of a DocPerm row. */
export type Right = (typeof RIGHTS)[number];

/** Columns every DocType table has (Frappe's default_fields without `doctype`). */
export const STANDARD_FIELDS = [
  'name',
  'owner',
  'creation',
  'modified',
  'modified_by',
  'docstatus',
  'idx',
] as const;
/** Columns child tables add. */
export const CHILD_FIELDS = ['parent', 'parentfield', 'parenttype'] as const;

/** The field types of the standard columns (Frappe's get_default_df): how queries and fetch_from read them. */
export const STANDARD_FIELD_TYPES: Readonly<
  Record<(typeof STANDARD_FIELDS)[number] | (typeof CHILD_FIELDS)[number], FieldType>
> = {
  name: 'Data',
  owner: 'Data',
  modified_by: 'Data',
  creation: 'Datetime',
  modified: 'Datetime',
  docstatus: 'Int',
  idx: 'Int',
  parent: 'Data',
  parentfield: 'Data',
  parenttype: 'Data',
};

/** True when `fieldname` is a standard column of `meta` (a child table's parent columns included). */
export function isStandardColumn(meta: Pick<DocTypeMeta, 'istable'>, fieldname: string): boolean {
  return (
    (STANDARD_FIELDS as readonly string[]).includes(fieldname) ||
    (meta.istable && (CHILD_FIELDS as readonly string[]).includes(fieldname))
  );
}

/** One field of a DocType, with Frappe's rules the server enforces. */
export interface FieldMeta {
  fieldname: string;
  fieldtype: FieldType;
  label: string;
  /** Link/Table target, Dynamic Link source field, or raw Select options. */
  options?: string;
  /** Select choices (options split on new lines, blank first option kept as ''). */
  selectOptions?: string[];
  reqd: boolean;
  unique: boolean;
  default?: string;
  /** varchar length for Data-like fields. */
  length?: number;
  readOnly: boolean;
  hidden: boolean;
  permlevel: number;
  noCopy: boolean;
  allowOnSubmit: boolean;
  setOnlyOnce: boolean;
  nonNegative: boolean;
  searchIndex: boolean;
  ignoreUserPermissions: boolean;
  /** Frappe's `fetch_from`: `link_field.source_field`, the linked document's field a save copies into this one. */
  fetchFrom?: string;
  /** Frappe's `fetch_if_empty`: the save fetches only when this field is empty; absent when off. */
  fetchIfEmpty?: true;
}

/** One DocPerm row. */
export interface PermissionMeta {
  role: string;
  permlevel: number;
  ifOwner: boolean;
  rights: Right[];
}

/** How new names are made (Frappe's autoname, normalized). */
export type NamingRule =
  | { kind: 'hash' }
  | { kind: 'autoincrement' }
  | { kind: 'field'; fieldname: string }
  | { kind: 'format'; pattern: string }
  | { kind: 'series'; pattern: string }
  | { kind: 'naming_series' }
  | { kind: 'prompt' }
  | { kind: 'uuid' }
  | { kind: 'script' };

/** A DocType as the runtime sees it. */
export interface DocTypeMeta {
  name: string;
  module: string;
  /** Frappe's scrubbed name: lower case, spaces as underscores (file names, dotted paths). */
  slug: string;
  /** `tab<DocType>`. */
  tableName: string;
  istable: boolean;
  issingle: boolean;
  isSubmittable: boolean;
  isVirtual: boolean;
  isTree: boolean;
  naming: NamingRule;
  titleField?: string;
  /** Frappe's `search_fields`: the fields a Link search matches besides `name`, and shows as its description. */
  searchFields?: string[];
  /** Frappe's `track_changes`: every update writes a Version with the diff (runtime/history); absent when off. */
  trackChanges?: true;
  /** Frappe's `allow_import`: a Data Import may write its documents (with the `import` right); absent when off. */
  allowImport?: true;
  sortField: string;
  sortOrder: 'asc' | 'desc';
  fields: FieldMeta[];
  permissions: PermissionMeta[];
  /** Source file, relative to the doctypes root it was loaded from. */
  source: string;
}
