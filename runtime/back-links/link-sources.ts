// Which fields may link to a document of each DocType (Frappe's get_link_fields and get_dynamic_link_map), worked out
// once per registry when the site opens, so a delete only queries the fields that can point at its DocType, and a
// DocType nothing links to costs nothing.
import type { FieldMeta } from '../meta/types';
import { fieldLists } from '../registry/field-lists';
import type { DocTypeBinding, Registry } from '../registry/registry';

/**
 * DocTypes whose links never stop a delete: Frappe's `ignore_links_on_delete` hook list (frappe/hooks.py; most are not
 * DocTypes of this service, but one added under such a name is ignored as Frappe would), and API Request Log, this
 * service's own log of requests, a record like Frappe's Access Log.
 */
export const IGNORED_ON_DELETE: ReadonlySet<string> = new Set([
  'Communication',
  'ToDo',
  'DocShare',
  'Email Unsubscribe',
  'Activity Log',
  'File',
  'Version',
  'Document Follow',
  'Comment',
  'View Log',
  'Tag Link',
  'Notification Log',
  'Email Queue',
  'Document Share Key',
  'Integration Request',
  'Unhandled Email',
  'Webhook Request Log',
  'Workspace',
  'Route History',
  'Access Log',
  'Permission Log',
  'API Request Log',
]);

/** A Link field whose rows the delete of their target settles itself (an OAuth Client's tokens are revoked with it). */
export interface SettledLink {
  readonly doctype: string;
  readonly fieldname: string;
}

/** A field that may hold the name of a document being deleted. */
export interface LinkSource {
  /** Where its values are: a document's row, a child row (reported as its parent), or a Single's `tabSingles` row. */
  readonly holder: 'document' | 'child' | 'single';
  /** The DocType the field belongs to (the child DocType for a child row's field). */
  readonly doctype: string;
  /** That DocType's table. */
  readonly table: string;
  readonly fieldname: string;
  /** A Dynamic Link's field naming the DocType it points into; undefined for a Link. */
  readonly doctypeField: string | undefined;
  /** For a child row: the parent DocTypes ignored on delete whose rows do not count. */
  readonly ignoredParents: readonly string[];
}

/** The DocTypes a Dynamic Link may point into: those its DocType field (a Select) lists, else every one. */
function dynamicTargets(binding: DocTypeBinding, field: FieldMeta): ReadonlySet<string> | undefined {
  const doctypeField = field.options ? binding.fieldMap.get(field.options) : undefined;
  if (doctypeField?.fieldtype !== 'Select' || !doctypeField.selectOptions) return undefined;
  return new Set(doctypeField.selectOptions.filter((o) => o !== ''));
}

/** The parent DocTypes of each child DocType (the DocTypes with a Table field of it). */
function parentsOfChildren(registry: Registry): Map<string, string[]> {
  const parents = new Map<string, string[]>();
  for (const binding of registry.all())
    for (const field of fieldLists(binding.meta).tables)
      if (field.options) {
        const list = parents.get(field.options) ?? [];
        if (!list.includes(binding.meta.name)) list.push(binding.meta.name);
        parents.set(field.options, list);
      }
  return parents;
}

/**
 * For each DocType whose documents can be deleted (not a child, a Single or virtual) and that some field may link to:
 * those fields, Links first, in registry order. DocTypes ignored on delete, virtual ones and `settled` fields are left
 * out.
 */
export function linkSourcesByTarget(
  registry: Registry,
  settled: readonly SettledLink[] = [],
): ReadonlyMap<string, readonly LinkSource[]> {
  const skip = new Set(settled.map((s) => `${s.doctype}\u0000${s.fieldname}`));
  const parents = parentsOfChildren(registry);
  const links = new Map<string, LinkSource[]>();
  const dynamic: { source: LinkSource; targets: ReadonlySet<string> | undefined }[] = [];
  for (const binding of registry.all()) {
    const { meta } = binding;
    // A virtual DocType has no table to look in.
    if (IGNORED_ON_DELETE.has(meta.name) || meta.isVirtual) continue;
    const ignoredParents = (parents.get(meta.name) ?? []).filter((p) => IGNORED_ON_DELETE.has(p));
    for (const field of fieldLists(meta).links) {
      if (!field.options || skip.has(`${meta.name}\u0000${field.fieldname}`)) continue;
      const isDynamic = field.fieldtype === 'Dynamic Link';
      const source: LinkSource = {
        holder: meta.issingle ? 'single' : meta.istable ? 'child' : 'document',
        doctype: meta.name,
        table: meta.tableName,
        fieldname: field.fieldname,
        doctypeField: isDynamic ? field.options : undefined,
        ignoredParents,
      };
      if (isDynamic) dynamic.push({ source, targets: dynamicTargets(binding, field) });
      else links.set(field.options, [...(links.get(field.options) ?? []), source]);
    }
  }
  const byTarget = new Map<string, readonly LinkSource[]>();
  for (const { meta } of registry.all()) {
    if (meta.istable || meta.issingle || meta.isVirtual) continue;
    const sources = [
      ...(links.get(meta.name) ?? []),
      ...dynamic.filter((d) => !d.targets || d.targets.has(meta.name)).map((d) => d.source),
    ];
    if (sources.length) byTarget.set(meta.name, sources);
  }
  return byTarget;
}
