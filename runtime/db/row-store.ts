// The row store: every document read, write and list query reaches the database through it. One implementation per
// backend (runtime/db/<backend>/row-store.ts), opened with the database (Database.openRowStore); callers never ask
// which database they are on.
import type { Knex } from 'knex';
import type { CompiledSlot, RowSet, SelectSource } from './compiled-query';
import type { DocTypeBinding } from '../registry/registry';
import type { EventRecord } from './system-tables';

/** A stored document as plain data: standard fields, field values, and child rows under their Table fields. */
export type DocData = Record<string, unknown>;

/** Either the knex instance or an open transaction. */
export type Queryable = Knex | Knex.Transaction;

/**
 * How documents become rows and back, on one database. `trx` is the knex of the write transaction the call belongs to
 * (inWriteTransaction's): an implementation may run its statements on that transaction's own connection (SQLite's
 * prepared statements, or mysql2 `execute` for a faster MariaDB store) as long as they commit and roll back with it.
 * Statement texts are the implementation's to build and cache (per DocType); nothing here takes SQL.
 */
/** The document a Link value finds: its name as stored and its docstatus (a cancelled one is 2). */
export interface LinkTarget {
  name: string;
  docstatus: number;
  /** The columns asked for (fetch_from's), decoded as a document read decodes them; only when some were asked. */
  values?: DocData;
}

export interface RowStore {
  /** Reads one committed document (a Single's values) with its child rows, outside any transaction; undefined when absent. */
  read(binding: DocTypeBinding, name: string): Promise<DocData | undefined>;
  /**
   * Reads one document with its child rows inside the transaction `trx`; `forUpdate` locks its row until the commit
   * where the database needs it. Given the site's knex rather than a transaction, it reads committed data.
   */
  load(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    options?: { forUpdate?: boolean },
  ): Promise<DocData | undefined>;
  /** Inserts a document's row and its child rows (409 DuplicateEntryError when the name is taken). */
  insert(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void>;
  /** Updates a document's row and replaces its child rows: kept rows updated, new rows inserted, missing rows deleted. */
  update(trx: Knex, binding: DocTypeBinding, data: DocData, previous: DocData): Promise<void>;
  /** Deletes a document's row and its child rows. */
  delete(trx: Knex, binding: DocTypeBinding, name: string): Promise<void>;
  /**
   * The name and docstatus of the document of `binding` that `name` finds (Link checks), as `trx` sees it; undefined
   * when none. The name differs from `name` where the database compares names loosely (MariaDB: case, accents,
   * trailing spaces). In a
   * transaction on a server database the row found stays share-locked until the commit, so a delete of it waits for
   * the save that links to it, and a save waits for a delete under way (and then finds no row). `columns` (stored
   * fields or standard columns of `binding`, from metadata, never from a request) are read in the same statement.
   */
  linkTarget(
    trx: Queryable,
    binding: DocTypeBinding,
    name: string,
    columns?: readonly string[],
  ): Promise<LinkTarget | undefined>;
  /** Whether a document of `binding` other than `name` holds `value` in `fieldname` (unique checks). */
  takenByOther(
    trx: Queryable,
    binding: DocTypeBinding,
    fieldname: string,
    value: unknown,
    name: string,
  ): Promise<boolean>;
  /** Inserts rows of a system table that all have the first row's columns, in batches (the request log). */
  insertRows(trx: Knex, table: string, rows: readonly Record<string, unknown>[]): Promise<void>;
  /**
   * Adds a row to the document event log inside the write transaction `trx` (the lifecycle's afterWrite / afterDelete,
   * once per document written). Undefined when the row is written, or held for the transaction's next statement, at
   * once: the cost of the event log is this call on every create, so a backend does it without a turn of the event
   * loop, a statement text built again or a round trip of its own where it can.
   */
  insertEvent(trx: Knex, event: EventRecord): Promise<void> | undefined;
  /** Inserts a row of a system table unless a row with the same `key` columns exists (nothing happens then). */
  insertRowOnce(
    trx: Knex,
    table: string,
    row: Record<string, unknown>,
    key: readonly string[],
  ): Promise<void>;
  /**
   * Takes the next number of a naming series (per prefix, in `tabSeries`) inside the write transaction `trx`, so a
   * rolled-back write gives its number back (series stay gap-free).
   */
  nextSeriesValue(trx: Knex, key: string): Promise<number>;
  /**
   * Runs a list SELECT of committed data; `slot` keeps what the store prepared for the next run of the same plan.
   * Past `limitMs` it fails with 503 QueryTimeoutError.
   */
  select(source: SelectSource, slot: CompiledSlot, limitMs: number): Promise<RowSet>;
  /** Runs a COUNT query of committed data (kept in `slot` and limited like `select`). */
  count(build: () => Knex.QueryBuilder, slot: CompiledSlot, limitMs: number): Promise<number>;
}
