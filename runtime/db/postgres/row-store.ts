// The PostgreSQL row store: statement texts built once per DocType and shape, run as node-postgres named prepared
// statements (statements.ts) with no knex builder on the hot path. Reads of committed data take a pooled connection and
// no transaction; writes run on the connection of the write transaction they belong to (inWriteTransaction's), so they
// commit and roll back with it. Full rows name their columns (never `select *`): a prepared `select *` fails once a
// migration adds a column under it.
import type { Knex } from 'knex';
import { queryTimeout } from '../query-time';
import type { DocData, LinkTarget, Queryable, RowStore } from '../row-store';
import type { PostgresDatabase } from './backend';
import { QUERY_CANCELED } from './errors';
import { deferInsert } from './group-commit';
import { READ_TIMEOUT_SLACK_MS, answeredWithin } from './read-timeout';
import {
  execute,
  numbered,
  onPooledConnection,
  pgConnection,
  quoteIdent,
  type PgConnection,
} from './statements';
import type { DocTypeMeta } from '../../meta/types';
import { compile, type CompiledSlot, type RowSet, type SelectSource } from '../compiled-query';
import type { DocTypeBinding, Registry } from '../../registry/registry';
import { fieldLists, tableFields } from '../../registry/field-lists';
import {
  CHILD_STANDARD,
  decodeRow,
  fullColumns,
  linkTargetOf,
  linkTargetRead,
  loadSingle,
  PARENT_STANDARD,
} from '../document-rows';
import { RowWrites, type RowStatements } from '../row-writes';
import { encodeValue } from '../stored-values';
import { EVENT_COLUMNS, SYSTEM_TABLES, type EventRecord } from '../system-tables';

/** Rows per INSERT of `insertRows`. */
const BATCH_SIZE = 100;

/** The event log's INSERT (its values in EVENT_COLUMNS order). */
const EVENT_INSERT = numbered(
  `insert into ${quoteIdent(SYSTEM_TABLES.events)} (${EVENT_COLUMNS.map(quoteIdent).join(', ')}) values (${EVENT_COLUMNS.map(() => '?').join(', ')})`,
);

/** Statement texts per DocType and kind, built once. */
const texts = new WeakMap<DocTypeMeta, Map<string, string>>();

function cachedText(meta: DocTypeMeta, kind: string, build: () => string): string {
  let byKind = texts.get(meta);
  if (!byKind) texts.set(meta, (byKind = new Map()));
  let sql = byKind.get(kind);
  if (sql === undefined) byKind.set(kind, (sql = numbered(build())));
  return sql;
}

/** The bound values of a full row (the `standard` columns but `skip`, then every stored field); undefined when one is unset. */
function fullRowValues(
  meta: DocTypeMeta,
  data: DocData,
  standard: readonly string[],
  skip?: string,
): unknown[] | undefined {
  const values: unknown[] = [];
  for (const key of standard) {
    if (data[key] === undefined) return undefined;
    if (key !== skip) values.push(data[key]);
  }
  for (const field of fieldLists(meta).stored) {
    if (data[field.fieldname] === undefined) return undefined;
    values.push(encodeValue(field, data[field.fieldname]));
  }
  return values;
}

/** How the shared write path (row-writes.ts) runs its statements here: named prepared statements with `$n`. */
const POSTGRES_ROW_STATEMENTS: RowStatements<PgConnection> = {
  writeConnection,
  text: cachedText,
  run: (conn, sql, values) => execute(conn, sql, values),
  fullRow: fullRowValues,
  async insertFull(conn, meta, standard, values) {
    // In a batch of the group commit the row joins the batch's INSERT of its table (sent before the next statement).
    if (deferInsert(conn, meta.tableName, fullColumns(meta, standard), values)) return;
    const sql = cachedText(meta, standard === PARENT_STANDARD ? 'insert' : 'insert-child', () => {
      const columns = fullColumns(meta, standard);
      return `insert into ${quoteIdent(meta.tableName)} (${columns.map(quoteIdent).join(', ')}) values (${columns.map(() => '?').join(', ')})`;
    });
    await execute(conn, sql, values);
  },
  quote: quoteIdent,
};

/** knex's compilation of a list plan with `$n` placeholders, kept with it. */
const nativeTexts = new WeakMap<object, string>();

/** PostgreSQL text cannot hold U+0000: no stored name has one, and binding one would fail the statement (22021). */
const unstorable = (value: unknown) => typeof value === 'string' && value.includes('\u0000');

/** Documents on PostgreSQL through cached statement texts and named prepared statements; see RowStore. */
export class PostgresRowStore implements RowStore {
  private readonly writes: RowWrites<PgConnection>;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly registry: Registry,
  ) {
    this.writes = new RowWrites(db, registry, POSTGRES_ROW_STATEMENTS);
  }

  async read(binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
    if (binding.meta.issingle) return loadSingle(this.db.knex, binding, this.registry);
    if (unstorable(name)) return undefined;
    return onPooledConnection(this.db.knex, (conn) => this.readOn(conn, binding, name, false));
  }

  async load(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<DocData | undefined> {
    if (binding.meta.issingle) return loadSingle(trx, binding, this.registry, options);
    if (unstorable(name)) return undefined;
    const conn = await pgConnection(trx);
    if (!conn) return this.read(binding, name);
    return this.readOn(conn, binding, name, options.forUpdate === true);
  }

  /** Reads one document (not a Single) with its child rows on `conn`. */
  private async readOn(
    conn: PgConnection,
    binding: DocTypeBinding,
    name: string,
    forUpdate: boolean,
  ): Promise<DocData | undefined> {
    const { meta } = binding;
    const sql = cachedText(meta, forUpdate ? 'read-locked' : 'read', () => {
      const columns = fullColumns(meta, PARENT_STANDARD).map(quoteIdent).join(', ');
      return `select ${columns} from ${quoteIdent(meta.tableName)} where name = ?${forUpdate ? ' for update' : ''}`;
    });
    const row = (await execute(conn, sql, [name])).rows[0];
    if (!row) return undefined;
    const data = decodeRow(meta, row);
    for (const { field, child } of tableFields(meta, this.registry)) {
      const childSql = cachedText(child.meta, 'children', () => {
        const columns = fullColumns(child.meta, CHILD_STANDARD).map(quoteIdent).join(', ');
        return `select ${columns} from ${quoteIdent(child.meta.tableName)} where parent = ? and parenttype = ? and parentfield = ? order by idx`;
      });
      const { rows } = await execute(conn, childSql, [name, meta.name, field.fieldname]);
      data[field.fieldname] = rows.map((r) => {
        const childRow = decodeRow(child.meta, r);
        childRow.doctype = child.meta.name;
        return childRow;
      });
    }
    return data;
  }

  insert(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void> {
    return this.writes.insert(trx, binding, data);
  }

  update(trx: Knex, binding: DocTypeBinding, data: DocData, previous: DocData): Promise<void> {
    return this.writes.update(trx, binding, data, previous);
  }

  delete(trx: Knex, binding: DocTypeBinding, name: string): Promise<void> {
    return this.writes.delete(trx, binding, name);
  }

  async linkTarget(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    columns: readonly string[] = [],
  ): Promise<LinkTarget | undefined> {
    const { meta } = binding;
    if (unstorable(name)) return undefined;
    const read = () => linkTargetRead(meta, columns, quoteIdent);
    const key = columns.length ? `\u0000${columns.join('\u0000')}` : '';
    const run = async (conn: PgConnection, sql: string): Promise<LinkTarget | undefined> => {
      const row = (await execute(conn, sql, [name])).rows[0];
      return row === undefined ? undefined : linkTargetOf(meta, row, columns);
    };
    const conn = await pgConnection(trx);
    // In a transaction, the row is key-share locked until the commit (a foreign key's own lock): a delete of the
    // target waits for this save, and this save for a delete already under way (then finds no row).
    if (conn)
      return run(
        conn,
        cachedText(meta, `link-target locked${key}`, () => `${read()} for key share`),
      );
    const plain = cachedText(meta, `link-target${key}`, read);
    return onPooledConnection(this.db.knex, (c) => run(c, plain));
  }

  async takenByOther(
    trx: Queryable,
    binding: DocTypeBinding,
    fieldname: string,
    value: unknown,
    name: string,
  ): Promise<boolean> {
    const { meta } = binding;
    if (unstorable(value)) return false;
    // `fieldname` comes from the DocType's metadata (its unique fields), never from a request.
    const sql = cachedText(
      meta,
      `taken\u0000${fieldname}`,
      () =>
        `select 1 from ${quoteIdent(meta.tableName)} where ${quoteIdent(fieldname)} = ? and name <> ? limit 1`,
    );
    const run = async (conn: PgConnection) => (await execute(conn, sql, [value, name])).rows.length > 0;
    const conn = await pgConnection(trx);
    return conn ? run(conn) : onPooledConnection(this.db.knex, run);
  }

  async insertRows(trx: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    // One row (an Idempotency-Key) in a batch of the group commit joins the batch's INSERT of its table, as a
    // document's row does.
    const row = rows.length === 1 ? rows[0] : undefined;
    const conn = row && (await pgConnection(trx));
    if (row && conn && deferInsert(conn, table, Object.keys(row), Object.values(row))) return;
    // One INSERT when the rows fit in one (a job item's outcome): batchInsert would wrap it in a savepoint.
    if (rows.length <= BATCH_SIZE) await trx(table).insert([...rows]);
    else await trx.batchInsert(table, [...rows], BATCH_SIZE);
  }

  /** One prepared INSERT on the write transaction's connection. */
  async insertEvent(trx: Knex, event: EventRecord): Promise<void> {
    const conn = await writeConnection(trx);
    const values = EVENT_COLUMNS.map((column) => event[column]);
    if (deferInsert(conn, SYSTEM_TABLES.events, EVENT_COLUMNS, values)) return;
    await execute(conn, EVENT_INSERT, values);
  }

  async insertRowOnce(
    trx: Knex,
    table: string,
    row: Record<string, unknown>,
    key: readonly string[],
  ): Promise<void> {
    await trx(table)
      .insert(row)
      .onConflict([...key])
      .ignore();
  }

  /** One upsert that returns the new number: the row is locked until the write transaction ends (series stay gap-free). */
  async nextSeriesValue(trx: Knex, key: string): Promise<number> {
    const conn = await writeConnection(trx);
    const table = quoteIdent(SYSTEM_TABLES.series);
    const sql = numbered(
      `insert into ${table} (name, current) values (?, 1) on conflict (name) do update set current = ${table}.current + 1 returning current`,
    );
    const { rows } = await execute<{ current: unknown }>(conn, sql, [key]);
    return Number(rows[0]?.current);
  }

  async select(source: SelectSource, slot: CompiledSlot, limitMs: number): Promise<RowSet> {
    const compiled = slot.compiled ?? (slot.compiled = compile(source.build(false)));
    const result = await this.readLimited(this.nativeText(compiled), compiled.bindings, limitMs);
    const known = slot.columns;
    const names = result.fields.map((f) => f.name);
    // The same column list each run of the slot: the page decoder built for it is reused (list-operations).
    const columns =
      known && known.length === names.length && known.every((c, i) => c === names[i])
        ? known
        : (slot.columns = names);
    return { columns, rows: result.rows };
  }

  async count(build: () => Knex.QueryBuilder, slot: CompiledSlot, limitMs: number): Promise<number> {
    const compiled = slot.compiled ?? (slot.compiled = compile(build()));
    const { rows } = await this.readLimited(this.nativeText(compiled), compiled.bindings, limitMs);
    return Number(rows[0]?.[0] ?? 0);
  }

  /** The text of a compiled list query with PostgreSQL's placeholders (knex compiles to `?`). */
  private nativeText(compiled: { sql: string }): string {
    let text = nativeTexts.get(compiled);
    if (text === undefined) {
      const client = this.db.knex.client as { positionBindings(sql: string): string };
      nativeTexts.set(compiled, (text = client.positionBindings(compiled.sql)));
    }
    return text;
  }

  /**
   * Runs a list SELECT of committed data on a pooled connection, rows as value lists, with statement_timeout at
   * `limitMs`; past it, 503 QueryTimeoutError. When that is not the session's own (db_statement_timeout, set at
   * connect), it is set for the read and set back right after it, whether the read succeeded or not, so the next user
   * of the connection (a GET, a write, the change counter) runs under its own timeout. The text is knex's compilation
   * of a checked plan, kept in its slot; it is not prepared by name (plans are many and their texts long-lived only
   * while remembered).
   */
  private async readLimited(
    sql: string,
    bindings: readonly unknown[],
    limitMs: number,
  ): Promise<{ rows: unknown[][]; fields: { name: string }[] }> {
    const limit = Math.ceil(limitMs);
    const session = (this.db.knex.client.config as Knex.Config).connection as { statement_timeout: number };
    try {
      return await onPooledConnection(this.db.knex, async (conn) => {
        const own = limit === session.statement_timeout;
        if (!own) await answeredWithin(conn, conn.query(`set statement_timeout = ${limit}`));
        try {
          const result = await answeredWithin(
            conn,
            conn.query<unknown[]>({ text: sql, values: [...bindings], rowMode: 'array' }),
            limit + READ_TIMEOUT_SLACK_MS,
          );
          return { rows: result.rows, fields: result.fields };
        } finally {
          // After the read, cancelled or not (a read without an answer closed the connection, and this fails with it).
          if (!own)
            await answeredWithin(conn, conn.query(`set statement_timeout = ${session.statement_timeout}`));
        }
      });
    } catch (err) {
      if ((err as { code?: unknown }).code === QUERY_CANCELED) throw queryTimeout(limitMs);
      throw err;
    }
  }
}

/** The connection of the write transaction `trx` (writes outside one are a programming error). */
async function writeConnection(trx: Knex): Promise<PgConnection> {
  const conn = await pgConnection(trx);
  if (!conn) throw new Error('PostgreSQL rows are written inside a write transaction (inWriteTransaction)');
  return conn;
}
