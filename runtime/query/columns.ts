// Column references of a query resolved against DocType metadata and the reader's field access: a field of the
// queried DocType, of one of its child tables (`parts.qty`), or of a Link's target (`todo.description`).
import { DataError, PermissionError } from '../errors/errors';
import { FIELD_TYPE_INFO, isTableType, storesValue, type ValueKind } from '../meta/field-types';
import {
  CHILD_FIELDS,
  STANDARD_FIELDS,
  STANDARD_FIELD_TYPES,
  isStandardColumn,
  type FieldMeta,
} from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import type { AccessTo, QueryAccess } from './reader-access';
import { clip } from './tokenize';

/** The value kind of a column, which decides value coercion and NULL handling. */
export type ColumnKind = Exclude<ValueKind, 'rows' | 'none'>;

/** What one query may reach: the queried DocType and the reader's access to it and, through Links, to others. */
export interface QueryScope {
  site: Site;
  binding: DocTypeBinding;
  access: QueryAccess;
  /** The reader's access to a Link's target DocType (the permission engine's answer, from the query's runner). */
  accessTo: AccessTo;
}

/** Where a referenced column lives. */
export type ColumnSource =
  | { kind: 'main' }
  | { kind: 'child'; tableField: string; child: DocTypeBinding }
  | { kind: 'link'; linkField: string; target: DocTypeBinding; access: QueryAccess };

/** A resolved, readable column. */
export interface ColumnRef {
  source: ColumnSource;
  field: string;
  kind: ColumnKind;
  /** The field's metadata; undefined for standard columns. */
  meta?: FieldMeta;
  /** The reference as the user wrote it, normalized (`qty`, `parts.qty`). */
  label: string;
}

/** Standard columns that are never NULL (Frappe skips its NULL fallback for them). */
export const NEVER_NULL: ReadonlySet<string> = new Set(['name', 'creation', 'modified', 'docstatus', 'idx']);

/** The value kind of a stored field. */
export function fieldKind(field: FieldMeta): ColumnKind {
  const value = FIELD_TYPE_INFO[field.fieldtype].value;
  return value === 'rows' || value === 'none' ? 'string' : value;
}

/** The value kind of a standard column (`string` for the name-like ones). */
export function standardKind(fieldname: string): ColumnKind {
  const type = STANDARD_FIELD_TYPES[fieldname as keyof typeof STANDARD_FIELD_TYPES];
  return type ? (FIELD_TYPE_INFO[type].value as ColumnKind) : 'string';
}

/** Checks that `fieldname` is a column of `binding` the reader may read; 400 when unknown, 403 when not readable. */
export function readableColumn(
  binding: DocTypeBinding,
  access: QueryAccess,
  fieldname: string,
  where: string,
): { kind: ColumnKind; meta?: FieldMeta } {
  const { meta } = binding;
  if (isStandardColumn(meta, fieldname)) return { kind: standardKind(fieldname) };
  const field = binding.fieldMap.get(fieldname);
  if (!field || !storesValue(field.fieldtype))
    throw new DataError(`${where}: Field not permitted in query: ${clip(fieldname)}`);
  if (field.fieldtype === 'Password' || !access.canReadField(meta, fieldname)) {
    throw new PermissionError(
      `${where}: You do not have permission to access field ${meta.name}.${fieldname}`,
    );
  }
  return { kind: fieldKind(field), meta: field };
}

/** Every column of `binding` the reader may read: standard columns, then readable stored fields (no Password). */
export function readableColumns(binding: DocTypeBinding, access: QueryAccess): string[] {
  const { meta } = binding;
  const out: string[] = [...STANDARD_FIELDS, ...(meta.istable ? CHILD_FIELDS : [])];
  for (const f of meta.fields) {
    if (storesValue(f.fieldtype) && f.fieldtype !== 'Password' && access.canReadField(meta, f.fieldname))
      out.push(f.fieldname);
  }
  return out;
}

/** The Table field of the queried DocType named `name`, or whose child DocType is `name` / `tab<name>`. */
export function childTable(
  scope: QueryScope,
  name: string,
): { tableField: string; child: DocTypeBinding } | undefined {
  const { binding, site } = scope;
  for (const f of binding.meta.fields) {
    if (!isTableType(f.fieldtype) || !f.options) continue;
    if (f.fieldname === name || f.options === name || `tab${f.options}` === name) {
      const child = site.registry.get(f.options);
      if (child) return { tableField: f.fieldname, child };
    }
  }
  return undefined;
}

function checkTableField(scope: QueryScope, tableField: string, where: string): void {
  if (!scope.access.canReadField(scope.binding.meta, tableField)) {
    throw new PermissionError(
      `${where}: You do not have permission to access field ${scope.binding.meta.name}.${tableField}`,
    );
  }
}

/** A column of the queried DocType's child table. */
export function childColumn(
  scope: QueryScope,
  table: { tableField: string; child: DocTypeBinding },
  fieldname: string,
  where: string,
): ColumnRef {
  checkTableField(scope, table.tableField, where);
  const { kind, meta } = readableColumn(table.child, scope.access, fieldname, where);
  return {
    source: { kind: 'child', ...table },
    field: fieldname,
    kind,
    meta,
    label: `${table.tableField}.${fieldname}`,
  };
}

/** A column of the queried DocType itself. */
export function mainColumn(scope: QueryScope, fieldname: string, where: string): ColumnRef {
  const { kind, meta } = readableColumn(scope.binding, scope.access, fieldname, where);
  return { source: { kind: 'main' }, field: fieldname, kind, meta, label: fieldname };
}

/**
 * Resolves a one- or two-part reference: `field`, `tabDocType.field` / `DocType.field` (the queried DocType),
 * `table_field.field` or `ChildDocType.field` (a child table), `link_field.field` (the Link's target, read with the
 * reader's access to that DocType). `joins` false allows only the queried DocType.
 */
export async function resolveColumn(
  scope: QueryScope,
  parts: string[],
  where: string,
  joins: boolean,
): Promise<ColumnRef> {
  const { meta } = scope.binding;
  const [first, second] = parts as [string, string | undefined];
  if (second === undefined) return mainColumn(scope, first, where);
  if (first === meta.name || first === meta.tableName) return mainColumn(scope, second, where);
  const refused = () => new DataError(`${where}: Field not permitted in query: ${clip(parts.join('.'))}`);
  if (!joins) throw refused();
  const table = childTable(scope, first);
  if (table) return childColumn(scope, table, second, where);
  const link = scope.binding.fieldMap.get(first);
  const target =
    link?.fieldtype === 'Link' && link.options ? scope.site.registry.get(link.options) : undefined;
  if (!link || !target || target.meta.issingle || target.meta.isVirtual) throw refused();
  if (!scope.access.canReadField(meta, first)) {
    throw new PermissionError(`${where}: You do not have permission to access field ${meta.name}.${first}`);
  }
  const access = await scope.accessTo(target.meta);
  const column = readableColumn(target, access, second, where);
  return {
    source: { kind: 'link', linkField: first, target, access },
    field: second,
    kind: column.kind,
    meta: column.meta,
    label: `${first}.${second}`,
  };
}
