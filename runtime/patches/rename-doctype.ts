// renameDocType(from, to) of a patch (as Frappe's rename_doc for a DocType): the rows of `tab<from>` become those of the
// DocType `to` now declares, and every value naming `from` names `to`: Link fields to DocType (a Dynamic Link's type
// field, User Permission's allow, File's attached_to_doctype …) and every Dynamic Link type field, child rows'
// parenttype, a Single's tabSingles rows, the stored passwords and Idempotency-Key records of its documents, its
// events, and the Deleted Documents of it (restored as `to`).
// Before the schema sync the table is renamed; after it (the sync made an empty `tab<to>`), the rows are copied over
// and `tab<from>` dropped. Running it again changes nothing.
import type { Knex } from 'knex';
import { PatchError } from '../errors/errors';
import { SYSTEM_TABLES } from '../db/migrate';
import type { Database } from '../db/backend';
import { storesValue } from '../meta/field-types';
import type { DocTypeMeta } from '../meta/types';
import type { Site } from '../site';
import { DELETED_DOCUMENT } from '../history/history-rows';
import { dropServiceIndexes, resyncDocType, tableColumns } from './service-indexes';

/** System tables with a `doctype` column naming the DocType of a document (the event log's too: resumed by DocType). */
const DOCTYPE_COLUMNS = [SYSTEM_TABLES.auth, SYSTEM_TABLES.idempotency, SYSTEM_TABLES.events] as const;

/** Renames the DocType `from` to its declared successor `to` (its rows and every value naming it) in `trx`. */
export async function renameDocType(site: Site, trx: Knex, from: string, to: string): Promise<void> {
  const target = site.registry.get(to);
  if (!target) throw new PatchError(`renameDocType: no DocType ${to} is declared (rename the JSON first)`);
  if (typeof from !== 'string' || !from.trim() || from === to || site.registry.get(from))
    throw new PatchError(`renameDocType: ${from} is still declared, or it is not a DocType name`);
  const { db } = site;
  const tables = await db.schema.tables(trx);
  if (target.meta.issingle) await moveSingle(trx, from, to);
  else if (!target.meta.isVirtual) await moveRows(db, trx, tables, `tab${from}`, target.meta.tableName);
  for (const { meta } of site.registry.all()) {
    if (meta.isVirtual) continue;
    const fields = doctypeFields(meta);
    if (meta.issingle) {
      if (fields.length)
        await trx(SYSTEM_TABLES.singles)
          .where({ doctype: meta.name, value: from })
          .whereIn('field', fields)
          .update({ value: to });
      continue;
    }
    if (!tables.has(meta.tableName) && meta.tableName !== target.meta.tableName) continue;
    const columns = await tableColumns(trx, meta.tableName);
    for (const field of fields)
      if (columns.has(field))
        await trx(meta.tableName)
          .where(field, from)
          .update({ [field]: to });
    if (meta.istable && columns.has('parenttype'))
      await trx(meta.tableName).where('parenttype', from).update({ parenttype: to });
  }
  for (const table of DOCTYPE_COLUMNS)
    if (tables.has(table)) await trx(table).where('doctype', from).update({ doctype: to });
  // A Deleted Document names its DocType in a Data field (as Frappe's), by which a restore finds it.
  const deleted = site.registry.get(DELETED_DOCUMENT);
  if (deleted && tables.has(deleted.meta.tableName))
    await trx(deleted.meta.tableName).where('deleted_doctype', from).update({ deleted_doctype: to });
  if (tables.has(SYSTEM_TABLES.schema)) for (const doctype of [from, to]) await resyncDocType(trx, doctype);
}

/** Moves a Single's values from `from` to `to` (replacing any `to` already has). */
async function moveSingle(trx: Knex, from: string, to: string): Promise<void> {
  if (!(await trx(SYSTEM_TABLES.singles).where('doctype', from).first('field'))) return;
  await trx(SYSTEM_TABLES.singles).where('doctype', to).delete();
  await trx(SYSTEM_TABLES.singles).where('doctype', from).update({ doctype: to });
}

/** Moves the rows of table `from` into `to`: a rename when `to` does not exist yet, else a copy of the shared columns. */
async function moveRows(
  db: Database,
  trx: Knex,
  tables: Set<string>,
  from: string,
  to: string,
): Promise<void> {
  if (!tables.has(from)) return;
  const columns = await tableColumns(trx, from);
  if (tables.has(to)) await keepUnsharedColumns(db, trx, from, to);
  await dropServiceIndexes(db, trx, from, columns);
  if (!tables.has(to)) {
    await db.patchStatements.renameTable(trx, from, to);
    return;
  }
  const shared = [...(await tableColumns(trx, to))].filter((c) => columns.has(c));
  const list = shared.map(() => '??').join(', ');
  await trx.raw(`INSERT INTO ?? (${list}) SELECT ${list} FROM ??`, [to, ...shared, ...shared, from]);
  await trx.schema.dropTable(from);
}

/**
 * Before rows are copied into an existing `to` (the schema sync made it): refused when `to` holds rows (a rename does not
 * merge two DocTypes' documents, as Frappe's), and every column of `from` that `to` lacks and that holds a value is
 * added to `to` with its type, so the values stay (as a removed field's column does) instead of going with `from`.
 */
async function keepUnsharedColumns(db: Database, trx: Knex, from: string, to: string): Promise<void> {
  if (await trx(to).first('name'))
    throw new PatchError(
      `renameDocType: ${to} already holds rows: a rename does not merge them with ${from}'s`,
    );
  const target = await db.schema.columns(trx, to);
  for (const [column, type] of await db.schema.columns(trx, from)) {
    if (target.has(column) || !(await trx(from).whereNotNull(column).first('name'))) continue;
    await trx.raw(`ALTER TABLE ?? ADD COLUMN ?? ${type}`, [to, column]);
  }
}

/** The stored fields of `meta` that hold DocType names: Links to DocType and the type fields of Dynamic Links. */
function doctypeFields(meta: DocTypeMeta): string[] {
  const names = new Set<string>();
  for (const field of meta.fields) {
    if (field.fieldtype === 'Link' && field.options === 'DocType') names.add(field.fieldname);
    if (field.fieldtype === 'Dynamic Link' && field.options) names.add(field.options);
  }
  return [...names].filter((name) =>
    meta.fields.some((f) => f.fieldname === name && storesValue(f.fieldtype)),
  );
}
