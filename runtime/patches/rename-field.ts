// renameField(doctype, from, to) of a patch (as Frappe's rename_field, which patches call): the values of column `from`
// move into the field `to` the DocType now declares, and `from` goes. Before the schema sync (`to` has no column yet)
// the column is renamed; after it, the values are copied into the new column and the old one is dropped. A Table field
// moves its child rows (parentfield); a Single moves its tabSingles value. Running it again changes nothing.
import type { Knex } from 'knex';
import { PatchError } from '../errors/errors';
import { FIELD_TYPE_INFO, isTableType } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';
import { addedColumnValue } from '../db/table-columns';
import { typeFamily } from '../db/type-families';
import { logger } from '../log/logger';
import { SYSTEM_TABLES } from '../db/migrate';
import type { Site } from '../site';
import { DELETED_DOCUMENT, storedCopy } from '../history/history-rows';
import { dropServiceIndexes, resyncDocType, tableColumns } from './service-indexes';

/** Renames field `from` of `doctype` to its declared field `to`, data included, in the patch's transaction `trx`. */
export async function renameField(
  site: Site,
  trx: Knex,
  doctype: string,
  from: string,
  to: string,
): Promise<void> {
  const binding = site.registry.get(doctype);
  if (!binding || binding.meta.isVirtual)
    throw new PatchError(`renameField: no DocType ${doctype} with a table is declared`);
  const { meta } = binding;
  const field = meta.fields.find((f) => f.fieldname === to);
  if (!field)
    throw new PatchError(`renameField: ${doctype} declares no field ${to} (rename it in the JSON first)`);
  if (typeof from !== 'string' || !from || from === to || meta.fields.some((f) => f.fieldname === from))
    throw new PatchError(`renameField: ${doctype} still declares ${from}, or it is not a field name`);
  const { db } = site;
  const tables = await db.schema.tables(trx);
  await renameInDeletedCopies(site, trx, tables, doctype, from, to);
  if (isTableType(field.fieldtype)) {
    const child = field.options ? site.registry.get(field.options) : undefined;
    if (child && tables.has(child.meta.tableName))
      await trx(child.meta.tableName)
        .where({ parenttype: doctype, parentfield: from })
        .update({ parentfield: to });
    return;
  }
  if (meta.issingle) {
    const moved = await trx(SYSTEM_TABLES.singles).where({ doctype, field: from }).first('field');
    if (!moved) return;
    await trx(SYSTEM_TABLES.singles).where({ doctype, field: to }).delete();
    await trx(SYSTEM_TABLES.singles).where({ doctype, field: from }).update({ field: to });
    return;
  }
  const table = meta.tableName;
  const columns = tables.has(table) ? await tableColumns(trx, table) : new Set<string>();
  if (!columns.has(from)) {
    logger().warn(
      { event: 'patch_rename_skipped', doctype, from, to },
      `renameField: ${table} has no column ${from}; nothing to rename`,
    );
    return;
  }
  if (columns.has(to)) await assertCopyable(site, trx, table, field, from);
  await dropServiceIndexes(db, trx, table, [from]);
  await resyncDocType(trx, doctype);
  if (!columns.has(to)) {
    await db.patchStatements.renameColumn(trx, table, from, to);
    return;
  }
  await trx(table).update({ [to]: trx.ref(from) });
  await db.patchStatements.dropColumn(trx, table, from);
}

/**
 * After the schema sync, `from`'s values are copied into the column of `field` the sync made: refused (nothing changed)
 * when the two columns differ in type (the copy would skip the conversion checks a type change has, and each database
 * would do otherwise) or when the new column already holds values of its own (other than the default the sync gave
 * every row), which the copy would overwrite.
 */
async function assertCopyable(
  site: Site,
  trx: Knex,
  table: string,
  field: FieldMeta,
  from: string,
): Promise<void> {
  const to = field.fieldname;
  const types = await site.db.schema.columns(trx, table);
  if (types.get(from) !== types.get(to))
    throw new PatchError(
      `renameField: ${table}.${from} (${types.get(from)}) and ${to} (${types.get(to)}) differ in type: rename it in [pre_model_sync], where the schema sync converts the column with its checks`,
    );
  const kind = FIELD_TYPE_INFO[field.fieldtype].column;
  const held = trx(table).whereNotNull(to);
  const fixed = addedColumnValue(field, kind);
  if (fixed !== undefined) held.whereNot(to, fixed);
  if (typeFamily(types.get(to) ?? '').family === 'text') held.whereNot(to, '');
  const row = (await held.count({ n: '*' }).first()) as { n: unknown } | undefined;
  const n = Number(row?.n ?? 0);
  if (n)
    throw new PatchError(
      `renameField: ${table}.${to} already holds values in ${n} row${n === 1 ? '' : 's'}: copying ${from} onto it would overwrite them`,
    );
}

/**
 * The copies Deleted Documents keep of `doctype`'s documents hold the value under `to` instead of `from`, so that a
 * restore after the rename brings it back (it would drop a key the DocType no longer has).
 */
async function renameInDeletedCopies(
  site: Site,
  trx: Knex,
  tables: Set<string>,
  doctype: string,
  from: string,
  to: string,
): Promise<void> {
  const deleted = site.registry.get(DELETED_DOCUMENT);
  if (!deleted || !tables.has(deleted.meta.tableName)) return;
  const rows = (await trx(deleted.meta.tableName)
    .where('deleted_doctype', doctype)
    .select('name', 'data')) as { name: string; data: unknown }[];
  for (const row of rows) {
    const copy = storedCopy(row.data);
    if (!copy || !(from in copy)) continue;
    copy[to] = copy[from];
    delete copy[from];
    await trx(deleted.meta.tableName)
      .where('name', row.name)
      .update({ data: JSON.stringify(copy) });
  }
}
