// Child rows of a list page nested under each parent: one query per selected Table field for the whole page.
import type { Knex } from 'knex';
import { decodeRow } from '../db/document-rows';
import type { ChildSelect } from './parse-fields';

/** Adds `select.fields` of the child rows under `select.tableField` of each row (rows need `name`). */
export async function attachChildRows(
  knex: Knex,
  parentType: string,
  select: ChildSelect,
  rows: Record<string, unknown>[],
): Promise<void> {
  const names = [...new Set(rows.map((r) => String(r.name)))];
  const byParent = new Map<string, Record<string, unknown>[]>();
  if (names.length) {
    const table = select.child.meta.tableName;
    const found = (await knex(table)
      .select([...new Set(['parent', ...select.fields])])
      .whereIn('parent', names)
      .andWhere('parenttype', parentType)
      .andWhere('parentfield', select.tableField)
      .orderBy([{ column: 'parent' }, { column: 'idx' }])) as Record<string, unknown>[];
    for (const row of found) {
      const decoded = decodeRow(select.child.meta, row);
      const out: Record<string, unknown> = {};
      for (const f of select.fields) out[f] = decoded[f] ?? null;
      const list = byParent.get(String(row.parent)) ?? [];
      list.push(out);
      byParent.set(String(row.parent), list);
    }
  }
  for (const row of rows) row[select.tableField] = byParent.get(String(row.name)) ?? [];
}
