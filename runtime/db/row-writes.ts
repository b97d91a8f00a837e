// The write path the MariaDB and PostgreSQL row stores share: a document's row and its child rows inserted, updated
// (child rows added, changed and removed as childRowChanges says) and deleted, on the connection of the write
// transaction they belong to, through statement texts built once per DocType and kind. A row with unset columns goes
// through knex instead (the columns it leaves out keep their defaults). What differs between the two servers (their
// placeholders and value encoding, how a batch of the group commit holds an insert back) is the backend's
// RowStatements.
import type { Knex } from 'knex';
import type { Database } from './backend';
import { childRowChanges } from './child-row-changes';
import { CHILD_STANDARD, PARENT_STANDARD, writeError, fullColumns, rowValues } from './document-rows';
import type { DocData } from './row-store';
import type { DocTypeMeta } from '../meta/types';
import { tableFields } from '../registry/field-lists';
import type { DocTypeBinding, Registry } from '../registry/registry';

/** How one server backend runs the statements of RowWrites on its connections `C`. */
export interface RowStatements<C> {
  /** The connection of the write transaction `trx` (writes outside one are a programming error). */
  writeConnection(trx: Knex): Promise<C>;
  /** The statement text named `kind` for `meta`, built (with `?` placeholders) once. */
  text(meta: DocTypeMeta, kind: string, build: () => string): string;
  /** Runs `sql` with `values` on `conn`. */
  run(conn: C, sql: string, values: unknown[]): Promise<unknown>;
  /** The bound values of a full row (the `standard` columns but `skip`, then every stored field); undefined when one is unset. */
  fullRow(
    meta: DocTypeMeta,
    data: DocData,
    standard: readonly string[],
    skip?: string,
  ): unknown[] | undefined;
  /** Inserts a full row (`values` from fullRow): held back in a batch of the group commit, else sent. */
  insertFull(conn: C, meta: DocTypeMeta, standard: readonly string[], values: unknown[]): Promise<void>;
  quote(identifier: string): string;
}

/** Inserts, updates and deletes documents with their child rows through a backend's RowStatements. */
export class RowWrites<C> {
  constructor(
    private readonly db: Pick<Database, 'errors'>,
    private readonly registry: Registry,
    private readonly statements: RowStatements<C>,
  ) {}

  async insert(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void> {
    const { meta } = binding;
    const conn = await this.statements.writeConnection(trx);
    await this.refusing(meta, data, this.insertRow(conn, trx, meta, data, PARENT_STANDARD));
    for (const { field, child } of tableFields(meta, this.registry)) {
      for (const row of (data[field.fieldname] as DocData[] | undefined) ?? [])
        await this.refusing(child.meta, row, this.insertRow(conn, trx, child.meta, row, CHILD_STANDARD));
    }
  }

  async update(trx: Knex, binding: DocTypeBinding, data: DocData, previous: DocData): Promise<void> {
    const { meta } = binding;
    const { statements } = this;
    const conn = await statements.writeConnection(trx);
    const name = String(data.name);
    await this.refusing(meta, data, this.updateRow(conn, trx, meta, data));
    for (const { field, child } of tableFields(meta, this.registry)) {
      const rows = data[field.fieldname] as DocData[] | undefined;
      if (rows === undefined) continue;
      const { before, removed } = childRowChanges(previous[field.fieldname] as DocData[] | undefined, rows);
      const deleteSql = statements.text(
        child.meta,
        'delete-child',
        () => `delete from ${statements.quote(child.meta.tableName)} where name = ? and parent = ?`,
      );
      for (const rowName of removed) await statements.run(conn, deleteSql, [rowName, name]);
      for (const row of rows) {
        const write = before.has(String(row.name))
          ? this.updateRow(conn, trx, child.meta, row, name)
          : this.insertRow(conn, trx, child.meta, row, CHILD_STANDARD);
        await this.refusing(child.meta, row, write);
      }
    }
  }

  async delete(trx: Knex, binding: DocTypeBinding, name: string): Promise<void> {
    const { statements } = this;
    const conn = await statements.writeConnection(trx);
    for (const { child } of tableFields(binding.meta, this.registry)) {
      const sql = statements.text(
        child.meta,
        'delete-children',
        () => `delete from ${statements.quote(child.meta.tableName)} where parent = ? and parenttype = ?`,
      );
      await statements.run(conn, sql, [name, binding.meta.name]);
    }
    const sql = statements.text(
      binding.meta,
      'delete',
      () => `delete from ${statements.quote(binding.meta.tableName)} where name = ?`,
    );
    await statements.run(conn, sql, [name]);
  }

  /** Awaits the write of a row of `meta` (`data`), throwing a refused write as the client's error (writeError). */
  private async refusing(meta: DocTypeMeta, data: DocData, write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      throw writeError(this.db, meta, data, err);
    }
  }

  /** Inserts a full row through its DocType's cached text; a row with unset columns leaves them to their defaults. */
  private async insertRow(
    conn: C,
    trx: Knex,
    meta: DocTypeMeta,
    data: DocData,
    standard: readonly string[],
  ): Promise<void> {
    const values = this.statements.fullRow(meta, data, standard);
    if (values) await this.statements.insertFull(conn, meta, standard, values);
    else await trx(meta.tableName).insert(rowValues(meta, data, standard));
  }

  /** Updates a stored row (a child row when `parent` is given) by name; unset columns are left as they are. */
  private async updateRow(
    conn: C,
    trx: Knex,
    meta: DocTypeMeta,
    data: DocData,
    parent?: string,
  ): Promise<void> {
    const { statements } = this;
    const standard = parent === undefined ? PARENT_STANDARD : CHILD_STANDARD;
    const name = String(data.name);
    const values = statements.fullRow(meta, data, standard, 'name');
    if (!values) {
      const changes = rowValues(meta, data, standard);
      delete changes.name;
      const query = trx(meta.tableName).update(changes).where('name', name);
      await (parent === undefined ? query : query.andWhere('parent', parent));
      return;
    }
    const sql = statements.text(meta, parent === undefined ? 'update' : 'update-child', () => {
      const columns = fullColumns(meta, standard).filter((c) => c !== 'name');
      const where = parent === undefined ? 'name = ?' : 'name = ? and parent = ?';
      return `update ${statements.quote(meta.tableName)} set ${columns.map((c) => `${statements.quote(c)} = ?`).join(', ')} where ${where}`;
    });
    values.push(name);
    if (parent !== undefined) values.push(parent);
    await statements.run(conn, sql, values);
  }
}
