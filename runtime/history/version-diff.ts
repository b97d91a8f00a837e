// Frappe's Version diff (frappe/core/doctype/version/version.py get_diff) between a stored document and the values an
// update writes: changed fields, child rows added, removed and changed. Values are the stored values, not Frappe's
// formatted ones; a row that only moved is a row change of `idx` (Frappe records nothing for a reorder). Password
// fields never appear.
import { isTableType, storesValue } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { DocData } from '../db/row-store';
import { tableFields } from '../registry/field-lists';
import type { DocTypeBinding, Registry } from '../registry/registry';

/** One changed value: [fieldname, old, new]. */
export type ChangedValue = [string, unknown, unknown];

/** A Version's `data`: what one update changed (Frappe's shape). */
export interface VersionDiff {
  changed: ChangedValue[];
  /** [table fieldname, the new row]. */
  added: [string, DocData][];
  /** [table fieldname, the removed row]. */
  removed: [string, DocData][];
  /** [table fieldname, index in the new rows (from 0), row name, its changed values]. */
  row_changed: [string, number, string, ChangedValue[]][];
}

/** Standard columns of a row kept in `added` and `removed` (the field values come from the child's meta). */
const ROW_STANDARD = ['name', 'idx'] as const;

/** A value as compared and recorded: missing is null, JSON values by their text. */
function plain(value: unknown): unknown {
  return value === undefined ? null : value;
}

function same(a: unknown, b: unknown): boolean {
  const x = plain(a);
  const y = plain(b);
  if (x === y) return true;
  if (typeof x === 'object' || typeof y === 'object') return JSON.stringify(x) === JSON.stringify(y);
  // A number read back as text (decimals on MariaDB) or the other way round.
  return (
    (typeof x === 'number' || typeof y === 'number') && x !== null && y !== null && Number(x) === Number(y)
  );
}

const recorded = new WeakMap<DocTypeMeta, readonly FieldMeta[]>();

/** The fields whose values a Version records: stored, not tables, never Password (worked out once per DocType). */
function valueFields(meta: DocTypeMeta): readonly FieldMeta[] {
  let found = recorded.get(meta);
  if (!found) {
    found = meta.fields.filter(
      (f) => storesValue(f.fieldtype) && !isTableType(f.fieldtype) && f.fieldtype !== 'Password',
    );
    recorded.set(meta, found);
  }
  return found;
}

function changedValues(fields: readonly FieldMeta[], old: DocData, now: DocData): ChangedValue[] {
  const out: ChangedValue[] = [];
  for (const f of fields) {
    if (!same(old[f.fieldname], now[f.fieldname]))
      out.push([f.fieldname, plain(old[f.fieldname]), plain(now[f.fieldname])]);
  }
  return out;
}

/** A child row as `added` and `removed` record it: its name, idx and field values (no Password). */
function rowRecord(fields: readonly FieldMeta[], row: DocData): DocData {
  const out: DocData = {};
  for (const key of ROW_STANDARD) out[key] = plain(row[key]);
  for (const f of fields) out[f.fieldname] = plain(row[f.fieldname]);
  return out;
}

/**
 * The diff from `old` (the stored document with its child rows) to `now` (the values written); undefined when nothing
 * a Version records changed. A Table field missing from `now` kept its rows.
 */
export function versionDiff(
  binding: DocTypeBinding,
  registry: Registry,
  old: DocData,
  now: DocData,
): VersionDiff | undefined {
  const meta = binding.meta;
  const diff: VersionDiff = {
    changed: changedValues(valueFields(meta), old, now),
    added: [],
    removed: [],
    row_changed: [],
  };
  for (const { field, child } of tableFields(meta, registry)) {
    if (!(field.fieldname in now)) continue;
    const fields = valueFields(child.meta);
    const before = (old[field.fieldname] as DocData[] | undefined) ?? [];
    const after = (now[field.fieldname] as DocData[] | undefined) ?? [];
    const byName = new Map(before.map((row, i) => [String(row.name), { row, idx: i + 1 }]));
    const kept = new Set<string>();
    after.forEach((row, i) => {
      const found = byName.get(String(row.name));
      if (!found) {
        diff.added.push([field.fieldname, rowRecord(fields, row)]);
        return;
      }
      kept.add(String(row.name));
      const changes = changedValues(fields, found.row, row);
      if (found.idx !== i + 1) changes.push(['idx', found.idx, i + 1]);
      if (changes.length) diff.row_changed.push([field.fieldname, i, String(row.name), changes]);
    });
    for (const row of before)
      if (!kept.has(String(row.name))) diff.removed.push([field.fieldname, rowRecord(fields, row)]);
  }
  if (Number(old.docstatus ?? 0) !== Number(now.docstatus ?? 0))
    diff.changed.push(['docstatus', Number(old.docstatus ?? 0), Number(now.docstatus ?? 0)]);
  const empty =
    !diff.changed.length && !diff.added.length && !diff.removed.length && !diff.row_changed.length;
  return empty ? undefined : diff;
}
