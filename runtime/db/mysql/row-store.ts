// The MariaDB/MySQL row store: statement texts built once per DocType and shape, run with mysql2 `execute` (prepared,
// cached per connection) and no knex builder on the hot path. Reads of committed data take a pooled connection and no
// transaction; writes run on the connection of the write transaction they belong to (inWriteTransaction's), so they
// commit and roll back with it. Rows come back as value lists and are decoded by a per-DocType decoder with fixed keys.
import type { Knex } from 'knex';
import { type DocData, type LinkTarget, type Queryable, type RowStore } from '../row-store';
import type { MysqlDatabase } from './backend';
import { deferInsert } from './group-commit';
import { EVENT_COLUMNS, SYSTEM_TABLES, type EventRecord } from '../system-tables';
import { heldConnection } from './transaction';
import {
  execute,
  mysqlConnection,
  mysqlValue,
  onPooledConnection,
  quoteIdent,
  type MysqlConnection,
  type MysqlField,
} from './statements';
import { queryTimeout } from '../query-time';
import { flavour, isTimeLimitError, limitedSelect } from './time-limit';
import type { DocTypeMeta, FieldMeta } from '../../meta/types';
import { compile, type CompiledSlot, type RowSet, type SelectSource } from '../compiled-query';
import type { DocTypeBinding, Registry } from '../../registry/registry';
import { fieldLists, tableFields } from '../../registry/field-lists';
import {
  documentColumns,
  fullColumns,
  linkTargetOf,
  linkTargetRead,
  loadSingle,
  PARENT_STANDARD,
} from '../document-rows';
import { RowWrites, type RowStatements } from '../row-writes';
import { decodeValue, encodeValue, formatDatetime } from '../stored-values';

/** Rows per INSERT of `insertRows`. */
const BATCH_SIZE = 100;

/** How one column of a result becomes a document value (undefined: as it comes). */
type ColumnDecode = ((value: unknown) => unknown) | undefined;

/** A decoder of the rows of one table for one result column list: the keys in column order, fixed. */
interface RowDecoder {
  names: readonly string[];
  decode(values: readonly unknown[]): DocData;
}

const datetime = (value: unknown) => (typeof value === 'string' ? formatDatetime(value) : value);
const integer = (value: unknown) => Number(value);

/** What decodeRow (document-rows.ts) does to one column of `meta`'s table, as a function chosen once. */
function columnDecode(meta: DocTypeMeta, name: string): ColumnDecode {
  const field: FieldMeta | undefined = meta.fields.find((f) => f.fieldname === name);
  const standard: ColumnDecode =
    name === 'creation' || name === 'modified'
      ? datetime
      : name === 'docstatus' || name === 'idx'
        ? integer
        : undefined;
  if (!field) return standard;
  if (!standard) return (value) => decodeValue(field, value);
  return (value) => decodeValue(field, standard(value));
}

const decoders = new WeakMap<DocTypeMeta, RowDecoder>();

/** The row decoder of `meta` for a result with `fields`, built once per DocType (again only if its columns change). */
function rowDecoder(meta: DocTypeMeta, fields: readonly MysqlField[]): RowDecoder {
  const known = decoders.get(meta);
  if (known && sameNames(known.names, fields)) return known;
  const names = fields.map((f) => f.name);
  const transforms = names.map((name) => columnDecode(meta, name));
  const decoder: RowDecoder = {
    names,
    decode(values) {
      const data: DocData = {};
      for (let i = 0; i < names.length; i++) {
        const transform = transforms[i];
        const value = values[i];
        data[names[i] as string] = transform ? transform(value) : value;
      }
      return data;
    },
  };
  decoders.set(meta, decoder);
  return decoder;
}

function sameNames(names: readonly string[], fields: readonly MysqlField[]): boolean {
  if (names.length !== fields.length) return false;
  for (let i = 0; i < names.length; i++) if (names[i] !== fields[i]?.name) return false;
  return true;
}

/** Statement texts per DocType and kind, built once. */
const texts = new WeakMap<DocTypeMeta, Map<string, string>>();

function cachedText(meta: DocTypeMeta, kind: string, build: () => string): string {
  let byKind = texts.get(meta);
  if (!byKind) texts.set(meta, (byKind = new Map()));
  let sql = byKind.get(kind);
  if (sql === undefined) byKind.set(kind, (sql = build()));
  return sql;
}

/** INSERT texts of system-table rows, per table and column list. */
const systemTexts = new Map<string, { head: string; tuple: string }>();

/** The INSERT head (`insert into t (...) values `) and row tuple of a system table's row with `columns`. */
function systemInsertText(table: string, columns: readonly string[]): { head: string; tuple: string } {
  const key = `${table}\u0000${columns.join('\u0000')}`;
  let text = systemTexts.get(key);
  if (!text) {
    text = {
      head: `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values `,
      tuple: `(${columns.map(() => '?').join(', ')})`,
    };
    if (systemTexts.size < 1024) systemTexts.set(key, text);
  }
  return text;
}

/** The event log's INSERT head and row tuple (values in EVENT_COLUMNS order). */
const EVENT_INSERT = systemInsertText(SYSTEM_TABLES.events, EVENT_COLUMNS);

/**
 * A series' next number, taken by one upsert on its primary key: that locks the series' row (made or found) and never
 * a gap. An UPDATE finding no row for a new prefix, then its INSERT, locked the gap where the row would go, and two
 * transactions doing that for new prefixes in one gap each waited at their INSERT for the other's gap lock: a deadlock.
 */
const SERIES_TAKE = `insert into ${quoteIdent(SYSTEM_TABLES.series)} (\`name\`, \`current\`) values (?, 1) on duplicate key update \`current\` = \`current\` + 1`;
/** The number SERIES_TAKE left, read in the same transaction (its own write: no lock, no wait). */
const SERIES_READ = `select \`current\` from ${quoteIdent(SYSTEM_TABLES.series)} where \`name\` = ?`;

/** The quoted column list a document's row is read with (documentColumns: never a column the DocType dropped). */
function selectList(meta: DocTypeMeta): string {
  return documentColumns(meta).map(quoteIdent).join(', ');
}

/** The bound values of the columns `fullColumns` names (an unset one is NULL, as knex's insert of a row leaves it). */
function boundRow(meta: DocTypeMeta, data: DocData, standard: readonly string[], skip?: string): unknown[] {
  const values: unknown[] = [];
  for (const key of standard) if (key !== skip) values.push(mysqlValue(data[key]));
  for (const field of fieldLists(meta).stored)
    values.push(mysqlValue(encodeValue(field, data[field.fieldname])));
  return values;
}

/** Whether every column of a full row of `meta` is set in `data` (the lifecycle writes them so). */
function isFullRow(meta: DocTypeMeta, data: DocData, standard: readonly string[]): boolean {
  for (const key of standard) if (data[key] === undefined) return false;
  for (const field of fieldLists(meta).stored) if (data[field.fieldname] === undefined) return false;
  return true;
}

/** How the shared write path (row-writes.ts) runs its statements here: mysql2 `execute` within `statementMs`. */
function mysqlRowStatements(statementMs: number): RowStatements<MysqlConnection> {
  return {
    writeConnection,
    text: cachedText,
    run: (conn, sql, values) => execute(conn, sql, values, statementMs),
    fullRow: (meta, data, standard, skip) =>
      isFullRow(meta, data, standard) ? boundRow(meta, data, standard, skip) : undefined,
    async insertFull(conn, meta, standard, values) {
      const kind = standard === PARENT_STANDARD ? 'insert' : 'insert-child';
      const head = cachedText(meta, `${kind} head`, () => {
        const columns = fullColumns(meta, standard);
        return `insert into ${quoteIdent(meta.tableName)} (${columns.map(quoteIdent).join(', ')}) values `;
      });
      const tuple = cachedText(
        meta,
        `${kind} tuple`,
        () =>
          `(${fullColumns(meta, standard)
            .map(() => '?')
            .join(', ')})`,
      );
      // In a batch of the group commit the row joins the batch's INSERT of its table (sent before the next statement).
      if (deferInsert(conn, head, tuple, values)) return;
      await execute(
        conn,
        cachedText(meta, kind, () => head + tuple),
        values,
        statementMs,
      );
    },
    quote: quoteIdent,
  };
}

/** Documents on MariaDB/MySQL through cached statement texts and mysql2 `execute`; see RowStore. */
export class MysqlRowStore implements RowStore {
  private readonly statementMs: number;
  private readonly writes: RowWrites<MysqlConnection>;

  constructor(
    private readonly db: MysqlDatabase,
    private readonly registry: Registry,
  ) {
    this.statementMs = db.statementMs;
    this.writes = new RowWrites(db, registry, mysqlRowStatements(db.statementMs));
  }

  read(binding: DocTypeBinding, name: string): Promise<DocData | undefined> {
    if (binding.meta.issingle) return loadSingle(this.db.knex, binding, this.registry);
    return onPooledConnection(
      this.db.knex,
      (conn) => this.readOn(conn, binding, name, false),
      this.statementMs,
    );
  }

  async load(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<DocData | undefined> {
    if (binding.meta.issingle) return loadSingle(trx, binding, this.registry, options);
    const conn = await mysqlConnection(trx);
    if (!conn) return this.read(binding, name);
    return this.readOn(conn, binding, name, options.forUpdate === true);
  }

  /** Reads one document (not a Single) with its child rows on `conn`. */
  private async readOn(
    conn: MysqlConnection,
    binding: DocTypeBinding,
    name: string,
    forUpdate: boolean,
  ): Promise<DocData | undefined> {
    const { meta } = binding;
    const sql = cachedText(
      meta,
      forUpdate ? 'read-locked' : 'read',
      () =>
        `select ${selectList(meta)} from ${quoteIdent(meta.tableName)} where name = ?${forUpdate ? ' for update' : ''}`,
    );
    const { rows, fields } = await execute<unknown[][]>(conn, sql, [name], this.statementMs, true);
    const values = rows[0];
    if (!values || !fields) return undefined;
    const data = rowDecoder(meta, fields).decode(values);
    for (const { field, child } of tableFields(meta, this.registry)) {
      const childSql = cachedText(
        child.meta,
        'children',
        () =>
          `select ${selectList(child.meta)} from ${quoteIdent(child.meta.tableName)} where parent = ? and parenttype = ? and parentfield = ? order by idx`,
      );
      const result = await execute<unknown[][]>(
        conn,
        childSql,
        [name, meta.name, field.fieldname],
        this.statementMs,
        true,
      );
      const decoder = result.fields ? rowDecoder(child.meta, result.fields) : undefined;
      data[field.fieldname] = decoder
        ? result.rows.map((r) => {
            const row = decoder.decode(r);
            row.doctype = child.meta.name;
            return row;
          })
        : [];
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
    const read = () => linkTargetRead(meta, columns, quoteIdent);
    const key = columns.length ? `\u0000${columns.join('\u0000')}` : '';
    const run = async (conn: MysqlConnection, sql: string): Promise<LinkTarget | undefined> => {
      const values = (await execute<unknown[][]>(conn, sql, [name], this.statementMs, true)).rows[0];
      if (values === undefined) return undefined;
      const row: Record<string, unknown> = { name: values[0], docstatus: values[1] };
      columns.forEach((column, i) => (row[column] = values[i + 2]));
      return linkTargetOf(meta, row, columns);
    };
    const conn = await mysqlConnection(trx);
    // In a transaction, a locking read (the latest committed row, shared-locked until the commit, as InnoDB's
    // foreign-key check): a delete of the target waits for this save, and this save for a delete already under way.
    if (conn)
      return run(
        conn,
        cachedText(meta, `link-target locked${key}`, () => `${read()} lock in share mode`),
      );
    const plain = cachedText(meta, `link-target${key}`, read);
    return onPooledConnection(this.db.knex, (c) => run(c, plain), this.statementMs);
  }

  async takenByOther(
    trx: Queryable,
    binding: DocTypeBinding,
    fieldname: string,
    value: unknown,
    name: string,
  ): Promise<boolean> {
    const { meta } = binding;
    // `fieldname` comes from the DocType's metadata (its unique fields), never from a request.
    const sql = cachedText(
      meta,
      `taken\u0000${fieldname}`,
      () =>
        `select 1 from ${quoteIdent(meta.tableName)} where ${quoteIdent(fieldname)} = ? and name <> ? limit 1`,
    );
    const run = async (conn: MysqlConnection) =>
      (await execute<unknown[][]>(conn, sql, [mysqlValue(value), name], this.statementMs, true)).rows.length >
      0;
    const conn = await mysqlConnection(trx);
    return conn ? run(conn) : onPooledConnection(this.db.knex, run, this.statementMs);
  }

  async insertRows(trx: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    const row = rows.length === 1 ? rows[0] : undefined;
    const conn = row && (await mysqlConnection(trx));
    if (row && conn) {
      // One row (an Idempotency-Key, a job item's outcome): in a batch of the group commit it joins the batch's INSERT
      // of its table, as a document's row does; else one prepared INSERT (knex's builder cost more than the statement).
      const { head, tuple } = systemInsertText(table, Object.keys(row));
      const values = Object.values(row).map(mysqlValue);
      if (!deferInsert(conn, head, tuple, values))
        await execute(conn, head + tuple, values, this.statementMs);
      return;
    }
    // One INSERT when the rows fit in one: batchInsert would wrap it in a savepoint.
    if (rows.length <= BATCH_SIZE) await trx(table).insert([...rows]);
    else await trx.batchInsert(table, [...rows], BATCH_SIZE);
  }

  /**
   * In a batch of the group commit, held with the batch's other rows and sent as one INSERT with them under the
   * batch's deadline (no round trip, no turn of the event loop); elsewhere one prepared INSERT within
   * db_statement_timeout.
   */
  insertEvent(trx: Knex, event: EventRecord): Promise<void> | undefined {
    const values = EVENT_COLUMNS.map((column) => event[column]);
    const conn = heldConnection(trx);
    if (conn && deferInsert(conn, EVENT_INSERT.head, EVENT_INSERT.tuple, values)) return undefined;
    return writeConnection(trx).then(async (held) => {
      await execute(held, EVENT_INSERT.head + EVENT_INSERT.tuple, values, this.statementMs);
    });
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

  /** SERIES_TAKE, then SERIES_READ: the row stays locked until the write transaction ends (series stay gap-free). */
  async nextSeriesValue(trx: Knex, key: string): Promise<number> {
    const conn = await writeConnection(trx);
    await execute(conn, SERIES_TAKE, [key], this.statementMs);
    const { rows } = await execute<[unknown][]>(conn, SERIES_READ, [key], this.statementMs, true);
    return Number(rows[0]?.[0]);
  }

  async select(source: SelectSource, slot: CompiledSlot, limitMs: number): Promise<RowSet> {
    const compiled = slot.compiled ?? (slot.compiled = compile(source.build(false)));
    const sql = limitedSelect(await flavour(this.db.knex), compiled, limitMs);
    const { rows, fields } = await this.readLimited(sql, compiled.bindings, limitMs);
    const known = slot.columns;
    // The same column list each run of the slot: the page decoder built for it is reused (list-operations).
    const columns =
      known && fields && sameNames(known, fields)
        ? known
        : (slot.columns = (fields ?? []).map((f) => f.name));
    return { columns, rows };
  }

  async count(build: () => Knex.QueryBuilder, slot: CompiledSlot, limitMs: number): Promise<number> {
    const compiled = slot.compiled ?? (slot.compiled = compile(build()));
    const sql = limitedSelect(await flavour(this.db.knex), compiled, limitMs);
    const { rows } = await this.readLimited(sql, compiled.bindings, limitMs);
    return Number(rows[0]?.[0] ?? 0);
  }

  /** Runs a time-limited SELECT of committed data on a pooled connection; past its limit, 503 QueryTimeoutError. */
  private async readLimited(
    sql: string,
    bindings: readonly unknown[],
    limitMs: number,
  ): Promise<{ rows: unknown[][]; fields: MysqlField[] | undefined }> {
    try {
      return await onPooledConnection(
        this.db.knex,
        (conn) => execute<unknown[][]>(conn, sql, bindings.map(mysqlValue), this.statementMs, true),
        this.statementMs,
      );
    } catch (err) {
      if (isTimeLimitError(err)) throw queryTimeout(limitMs);
      throw err;
    }
  }
}

/** The connection of the write transaction `trx` (writes outside one are a programming error). */
async function writeConnection(trx: Knex): Promise<MysqlConnection> {
  const conn = await mysqlConnection(trx);
  if (!conn) throw new Error('MariaDB rows are written inside a write transaction (inWriteTransaction)');
  return conn;
}
