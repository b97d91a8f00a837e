// A DocType's metadata in Frappe's own shape (snake_case keys, 0/1 flags, `fields` and `permissions` rows), as
// Frappe's `GET /api/v2/doctype/{doctype}/meta` answers it.
import { RIGHTS, type DocTypeMeta, type FieldMeta, type NamingRule } from './types';

const flag = (value: boolean) => (value ? 1 : 0);

function autoname(rule: NamingRule): string {
  switch (rule.kind) {
    case 'hash':
    case 'autoincrement':
      return rule.kind;
    case 'field':
      return `field:${rule.fieldname}`;
    case 'format':
      return `format:${rule.pattern}`;
    case 'series':
      return rule.pattern;
    case 'naming_series':
      return 'naming_series:';
    case 'prompt':
      return 'Prompt';
    case 'uuid':
      return 'UUID';
    case 'script':
      return '';
    default: {
      const never: never = rule;
      return String(never);
    }
  }
}

function docField(field: FieldMeta, idx: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    doctype: 'DocField',
    idx,
    fieldname: field.fieldname,
    fieldtype: field.fieldtype,
    label: field.label,
    options: field.options,
    reqd: flag(field.reqd),
    unique: flag(field.unique),
    default: field.default,
    length: field.length,
    read_only: flag(field.readOnly),
    hidden: flag(field.hidden),
    permlevel: field.permlevel,
    no_copy: flag(field.noCopy),
    allow_on_submit: flag(field.allowOnSubmit),
    set_only_once: flag(field.setOnlyOnce),
    non_negative: flag(field.nonNegative),
    search_index: flag(field.searchIndex),
    ignore_user_permissions: flag(field.ignoreUserPermissions),
    fetch_from: field.fetchFrom,
    fetch_if_empty: flag(field.fetchIfEmpty === true),
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

/** The DocType as Frappe's meta endpoint shows it. */
export function frappeMeta(meta: DocTypeMeta): Record<string, unknown> {
  return {
    doctype: 'DocType',
    name: meta.name,
    module: meta.module,
    istable: flag(meta.istable),
    issingle: flag(meta.issingle),
    is_submittable: flag(meta.isSubmittable),
    is_virtual: flag(meta.isVirtual),
    is_tree: flag(meta.isTree),
    allow_import: flag(meta.allowImport === true),
    autoname: autoname(meta.naming),
    ...(meta.titleField ? { title_field: meta.titleField } : {}),
    ...(meta.searchFields ? { search_fields: meta.searchFields.join(',') } : {}),
    sort_field: meta.sortField,
    sort_order: meta.sortOrder.toUpperCase(),
    fields: meta.fields.map((f, i) => docField(f, i + 1)),
    permissions: meta.permissions.map((p, i) => ({
      doctype: 'DocPerm',
      idx: i + 1,
      role: p.role,
      permlevel: p.permlevel,
      if_owner: flag(p.ifOwner),
      ...Object.fromEntries(RIGHTS.map((r) => [r, flag(p.rights.includes(r))])),
    })),
  };
}
