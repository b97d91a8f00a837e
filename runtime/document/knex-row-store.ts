// The MariaDB/MySQL row store: knex query builders over mysql2, in the caller's knex transaction. (A store that
// builds its statement texts once per DocType and runs them with mysql2 `execute` can replace it behind RowStore.)
import type { Knex } from 'knex';
import type { Database } from '../db/connect';
import {
  countThroughKnex,
  selectThroughKnex,
  type CompiledSlot,
  type RowSet,
  type SelectSource,
} from '../query/run-query';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { childRowChanges } from './child-row-changes';
import { tableFields } from './field-lists';
import type { RowStore } from './row-store';
import {
  CHILD_STANDARD,
  decodeRow,
  insertError,
  loadChildren,
  loadSingle,
  PARENT_STANDARD,
  rowValues,
  type DocData,
  type Queryable,
} from './store';

/** Rows per INSERT of `insertRows`. */
const BATCH_SIZE = 100;

/** Documents on MariaDB/MySQL through knex; see RowStore. */
export class KnexRowStore implements RowStore {
  constructor(
    private readonly db: Database,
    private readonly registry: Registry,
  ) {}

  read(binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
    return this.load(this.db.knex, binding, name);
  }

  async load(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<DocData | undefined> {
    const { meta } = binding;
    if (meta.issingle) return loadSingle(trx, binding);
    let query = trx(meta.tableName).where('name', name).first();
    if (options.forUpdate) query = query.forUpdate();
    const row = (await query) as Record<string, unknown> | undefined;
    if (!row) return undefined;
    const data = decodeRow(meta, row);
    const children = (await loadChildren(trx, meta, this.registry, [name])).get(name);
    for (const { field } of tableFields(meta, this.registry))
      data[field.fieldname] = children?.get(field.fieldname) ?? [];
    return data;
  }

  async insert(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void> {
    const { meta } = binding;
    try {
      await trx(meta.tableName).insert(rowValues(meta, data, PARENT_STANDARD));
    } catch (err) {
      throw insertError(meta, data.name, err);
    }
    for (const { field, child } of tableFields(meta, this.registry)) {
      for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
        await trx(child.meta.tableName).insert(rowValues(child.meta, row, CHILD_STANDARD));
    }
  }

  async update(trx: Knex, binding: DocTypeBinding, data: DocData, previous: DocData): Promise<void> {
    const { meta } = binding;
    const name = String(data.name);
    const changes = rowValues(meta, data, PARENT_STANDARD);
    delete changes.name;
    await trx(meta.tableName).update(changes).where('name', name);
    for (const { field, child } of tableFields(meta, this.registry)) {
      const rows = data[field.fieldname] as DocData[] | undefined;
      if (rows === undefined) continue;
      const { before, removed } = childRowChanges(previous[field.fieldname] as DocData[] | undefined, rows);
      if (removed.length)
        await trx(child.meta.tableName).delete().whereIn('name', removed).andWhere('parent', name);
      for (const row of rows) {
        const values = rowValues(child.meta, row, CHILD_STANDARD);
        if (!before.has(String(row.name))) {
          await trx(child.meta.tableName).insert(values);
          continue;
        }
        const { name: rowName, ...rowChanges } = values;
        await trx(child.meta.tableName)
          .update(rowChanges)
          .where('name', String(rowName))
          .andWhere('parent', name);
      }
    }
  }

  async delete(trx: Knex, binding: DocTypeBinding, name: string): Promise<void> {
    for (const { child } of tableFields(binding.meta, this.registry))
      await trx(child.meta.tableName)
        .delete()
        .where('parent', name)
        .andWhere('parenttype', binding.meta.name);
    await trx(binding.meta.tableName).delete().where('name', name);
  }

  async exists(trx: Queryable, binding: DocTypeBinding, name: string): Promise<boolean> {
    return (await trx(binding.meta.tableName).where('name', name).first('name')) !== undefined;
  }

  async takenByOther(
    trx: Queryable,
    binding: DocTypeBinding,
    fieldname: string,
    value: unknown,
    name: string,
  ): Promise<boolean> {
    const clash: unknown = await trx(binding.meta.tableName)
      .where(fieldname, value as string)
      .whereNot('name', name)
      .first('name');
    return clash !== undefined;
  }

  async insertRows(trx: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    await trx.batchInsert(table, [...rows], BATCH_SIZE);
  }

  select(source: SelectSource, _slot: CompiledSlot, limitMs: number): Promise<RowSet> {
    return selectThroughKnex(this.db.knex, source, limitMs);
  }

  count(build: () => Knex.QueryBuilder, _slot: CompiledSlot, limitMs: number): Promise<number> {
    return countThroughKnex(this.db.knex, build, limitMs);
  }
}
