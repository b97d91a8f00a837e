// Link expansion: Link (and Dynamic Link) values replaced by the linked documents, each read through the reader's
// access to the target DocType (unreadable DocTypes, rows or fields stay hidden: the value stays the plain name).
import { decodeRow } from '../db/document-rows';
import { type DocData } from '../db/row-store';
import { AppError } from '../errors/errors';
import { isTableType } from '../meta/field-types';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { applyFilterTree } from './build-where';
import { readableColumns } from './columns';
import { cond, and } from './filter-tree';
import type { AccessTo } from './reader-access';

/** A Link value found in a document: the object holding it, the field, and the target DocType. */
interface LinkSlot {
  holder: DocData;
  field: string;
  target: string;
  name: string;
}

function collect(
  site: Site,
  binding: DocTypeBinding,
  doc: DocData,
  only: ReadonlySet<string> | undefined,
  nested: boolean,
  out: LinkSlot[],
): void {
  for (const field of binding.meta.fields) {
    const value = doc[field.fieldname];
    if (isTableType(field.fieldtype) && nested && Array.isArray(value) && field.options) {
      const child = site.registry.get(field.options);
      if (child) for (const row of value as DocData[]) collect(site, child, row, undefined, false, out);
      continue;
    }
    if (typeof value !== 'string' || value === '' || (only && !only.has(field.fieldname))) continue;
    let target: unknown;
    if (field.fieldtype === 'Link') target = field.options;
    else if (field.fieldtype === 'Dynamic Link' && field.options) target = doc[field.options];
    if (typeof target === 'string' && target)
      out.push({ holder: doc, field: field.fieldname, target, name: value });
  }
}

/**
 * Replaces Link values of `docs` (and, with `nested`, of their child rows) by the linked documents as the reader may
 * read them (`accessTo`: the reader's access to each target DocType); `only` limits expansion to those Link fields. One query per target DocType.
 */
export async function expandLinks(
  site: Site,
  accessTo: AccessTo,
  binding: DocTypeBinding,
  docs: DocData[],
  options: { only?: readonly string[]; nested?: boolean; version: 1 | 2 },
): Promise<void> {
  const slots: LinkSlot[] = [];
  const only = options.only ? new Set(options.only) : undefined;
  for (const doc of docs) collect(site, binding, doc, only, options.nested ?? false, slots);
  const byTarget = new Map<string, LinkSlot[]>();
  for (const slot of slots) byTarget.set(slot.target, [...(byTarget.get(slot.target) ?? []), slot]);
  for (const [doctype, targetSlots] of byTarget) {
    const target = site.registry.get(doctype);
    if (!target || target.meta.issingle || target.meta.isVirtual) continue;
    let access;
    try {
      access = await accessTo(target.meta);
    } catch (err) {
      if (err instanceof AppError && (err.status === 401 || err.status === 403)) continue;
      throw err;
    }
    const table = target.meta.tableName;
    const names = [...new Set(targetSlots.map((s) => s.name))];
    const q = site.db.knex(table).select(readableColumns(target, access).map((c) => `${table}.${c}`));
    const tree = access.restriction
      ? and(cond('name', 'in', names), access.restriction)
      : cond('name', 'in', names);
    applyFilterTree(q, tree, {
      knex: site.db.knex,
      registry: site.registry,
      binding: target,
      qualifier: table,
    });
    const found = new Map<string, DocData>();
    for (const row of (await q) as Record<string, unknown>[]) {
      const doc = decodeRow(target.meta, row);
      if (options.version === 1) for (const key of Object.keys(doc)) if (doc[key] === null) delete doc[key];
      found.set(String(row.name), { ...doc, doctype: target.meta.name });
    }
    for (const slot of targetSlots) {
      const linked = found.get(slot.name);
      if (linked) slot.holder[slot.field] = linked;
    }
  }
}
