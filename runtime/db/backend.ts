// What the core asks of a database backend (one folder per backend under runtime/db/, named in backends.ts): open a
// database from a DATABASE_URL, and of the open database its row store, write transactions, schema DDL and change
// versions. The core never asks which backend it runs on; what only one engine can do is an optional member named
// after what it does.
import type { Knex } from 'knex';
import type { PatchStatements } from './patch-statements';
import type { SiteConfig } from '../config/config';
import type { ColumnKind } from '../meta/field-types';
import type { DocTypeMeta } from '../meta/types';
import type { Registry } from '../registry/registry';
import type { DatabaseHealth } from './health';
import type { RowStore } from './row-store';
import type { ColumnSpec } from './table-columns';

/** How long the database may keep a request waiting (site config db_*_timeout, ms). */
export interface DatabaseTimeouts {
  statementMs: number;
  acquireMs: number;
  busyMs: number;
}

/** How to open a database: its timeouts, and the site config keys a backend reads itself (its own tuning). */
export interface DatabaseOptions extends DatabaseTimeouts {
  site?: Readonly<Partial<SiteConfig>>;
}

/** The defaults of the site config keys. */
export const DEFAULT_TIMEOUTS: DatabaseTimeouts = { statementMs: 8000, acquireMs: 5000, busyMs: 5000 };

/** A database backend: a folder under runtime/db/ whose `backend.ts` exports one of these. */
export interface Backend {
  /** The backend's name, as the folder's (log lines, error messages). */
  name: string;
  /** DATABASE_URL prefixes it serves (`sqlite:`, `mysql://`). */
  schemes: readonly string[];
  /** Opens the database named by `url` (one of `schemes`). */
  connect(url: string, options: DatabaseOptions): Database;
}

/** Where a write transaction joins a batch instead of opening its own (bulk items, write-transaction.ts). */
export interface WriteBatch {
  run<T>(work: (q: Knex) => Promise<T>): Promise<T>;
}

/** A batch bulk items share, committed once `close` has been called and its last work has ended. */
export interface ClosableWriteBatch extends WriteBatch {
  close(): Promise<void>;
}

/** How a backend runs bulk items' writes. */
export interface BulkWrites {
  /** How many items are started at once. */
  window: number;
  /**
   * A batch the next `window` items share (one transaction, a savepoint per item); absent where the backend already
   * commits concurrent writes together (SQLite's group commit).
   */
  openBatch?(): ClosableWriteBatch;
}

/**
 * A counter of writes per table that every process on the database sees: each write bumps its tables' versions in its
 * own transaction, so a result remembered with the versions it was read at is current while they have not moved.
 */
export interface ChangeCounter {
  /** Runs after every commit that wrote `tables`, before the writer hears of it (one listener; the last one set). */
  onCommit(listener: (tables: readonly string[]) => Promise<void> | void): void;
  /**
   * The versions of `tables` now (a table the counter does not know is missing from the map). `askedAt` (ms since the
   * epoch; default now): when the requests this read answers asked, from which it has db_statement_timeout in all.
   */
  read(tables: readonly string[], askedAt?: number): Promise<Map<string, number>>;
}

/**
 * How far a replica has replayed its primary's writes, as a backend can tell (read-replicas.ts routes list and count
 * reads by it). A position is the backend's own value (MariaDB: change versions per table; PostgreSQL: a WAL LSN); the
 * router only passes positions back to these methods.
 */
export interface ReplicaPositions<P = unknown> {
  /** Whether a position is per table: a read whose tables are unknown then cannot go to a replica. */
  perTable: boolean;
  /** The primary's position now (for `tables`): every write acknowledged before the call is in it. */
  primary(tables: readonly string[]): Promise<P>;
  /**
   * The primary's position given by its change counter's versions (ChangeCounter.read), read after the request asked,
   * where they are one; undefined when they are not.
   */
  fromChangeVersions(versions: ReadonlyMap<string, number>): P | undefined;
  /** What the replica database `replica` has replayed now (for `tables`). */
  replica(replica: Database, tables: readonly string[]): Promise<P>;
  /** Whether a replica at `at` has every write of the primary at `needed`, for reads of `tables`. */
  covers(at: P, needed: P, tables: readonly string[]): boolean;
  /** What a replica known to be at `known`, then seen at `at`, is known to have (it only moves forward). */
  merge(known: P | undefined, at: P): P;
  /** How many seconds the replica's replay is behind, as the replica reports it; undefined when it is not replaying. */
  lagSeconds(replica: Database): Promise<number | undefined>;
}

/** An index of a live table. */
export interface LiveIndex {
  unique: boolean;
  /** The statement that creates it again, where the backend keeps one (SQLite's table rebuild). */
  sql?: string;
}

/** A column type a migration converts to: the column kind of a field type, and the varchar length. */
export interface ColumnTarget {
  kind: ColumnKind;
  length?: number;
}

/** What a type change of one table rewrites: every column the table keeps, and the names of those it converts. */
export interface TypeChange {
  table: string;
  /** The DocType's columns (table-columns.ts). */
  specs: ColumnSpec[];
  /** Columns the table holds that no field defines any more (kept): name → live type. */
  kept: Map<string, string>;
  /** The fields whose column type changes. */
  changed: string[];
  /** The table's indexes now. */
  indexes: Map<string, LiveIndex>;
}

/**
 * The schema DDL of a backend: what migrate.ts and the migration planner cannot say through knex's schema builder
 * alone. Every statement is returned as SQL text (the plan shows it), built with the backend's identifier quoting.
 */
export interface SchemaDialect {
  /** Every table of the database, read at once. */
  tables(knex: Knex): Promise<Set<string>>;
  /** The indexes of `table` by name. */
  indexes(knex: Knex, table: string): Promise<Map<string, LiveIndex>>;
  /** The columns of `table`: name → type, as `columnType` names types. */
  columns(knex: Knex, table: string): Promise<Map<string, string>>;
  /** The type `columns` reports for a column made for `target`. */
  columnType(target: ColumnTarget): string;
  /**
   * A condition (SQL with bindings, for a WHERE clause) true for the rows whose `column` (of live type `from`) would not
   * convert exactly to `to`: 'all' when no non-empty value converts, undefined when every value does.
   */
  inexactValues(
    knex: Knex,
    column: string,
    from: string,
    to: ColumnTarget,
  ): { sql: string; bindings: readonly (string | number)[] } | 'all' | undefined;
  /** The statements that convert the columns of a type change, keeping every row, column and index. */
  changeColumnTypes(knex: Knex, change: TypeChange): string[];
  /** The statement that adds an index on `column` (of type `target`), online where the backend can. */
  addIndex(
    knex: Knex,
    table: string,
    index: string,
    column: string,
    unique: boolean,
    target: ColumnTarget,
  ): string;
  /** The statement that drops an index. */
  dropIndex(knex: Knex, table: string, index: string): string;
  /** What every CREATE TABLE of a DocType table adds (a character set). */
  tableOptions(table: Knex.CreateTableBuilder): void;
  /**
   * Adds `column` as the table's key, a whole number the database assigns, larger than every id the table holds (the
   * event log's ids). No id is reused while the table keeps its newest row.
   */
  sequenceKey(table: Knex.CreateTableBuilder, column: string): void;
  /** Runs the CREATE TABLE statements `builders` (possibly all at once). */
  createTables(knex: Knex, builders: Knex.SchemaBuilder[]): Promise<void>;
  /**
   * Runs a whole migration run (patches and schema sync) holding the database's migration lock, so that processes
   * starting together migrate one at a time (SQLite: a lock file's write lock; MariaDB: GET_LOCK). The lock is held by
   * a connection of its own: the run's statements go through the database's usual connections.
   */
  migrationLock<T>(knex: Knex, work: () => Promise<T>): Promise<T>;
  /**
   * Runs a schema sync (`work` with the knex to run it on) in the backend's sync transaction (SQLite: one transaction,
   * begun IMMEDIATE; MariaDB: none, DDL commits by itself); then whatever the backend keeps per DocType table (the change
   * counter's rows).
   */
  applySync(knex: Knex, doctypes: readonly DocTypeMeta[], work: (knex: Knex) => Promise<void>): Promise<void>;
  /**
   * Runs the statements of one DocType all or nothing where DDL is transactional (SQLite: a savepoint); where it is not
   * (MariaDB), the refusal checks that ran before are what keeps a DocType whole.
   */
  atomically(knex: Knex, work: () => Promise<void>): Promise<void>;
  /**
   * Whether `atomically` undoes the statements of a DocType that failed (SQLite); where it cannot (MariaDB: each DDL
   * statement commits), those that ran stay applied, and the migration records and says so.
   */
  ddlRollsBack: boolean;
}

/** How a backend's driver reports the errors the core treats alike, whatever the database. */
export interface DriverErrors {
  /**
   * The reason (a code) when the driver's error `err` (one error, not its `cause`) means the database is unavailable or
   * too busy right now (503, retry); undefined otherwise.
   */
  unavailableReason(err: { code?: unknown; message?: unknown }): string | undefined;
  /**
   * Whether the driver's error `err` (one error, not its `cause`) says the server rolled the transaction back to break
   * a deadlock (PostgreSQL: or a serialization failure): the database is up, and the same work run again may succeed.
   */
  isDeadlock(err: { code?: unknown; errno?: unknown }): boolean;
  /** Whether the driver's error `err` is a primary-key or unique-index clash. */
  isDuplicateKey(err: { code?: unknown; errno?: unknown }): boolean;
  /**
   * What the duplicate-key error `err` names as the clashing key: the unique index's name, or (SQLite) its column;
   * undefined when it names none.
   */
  duplicateKeyName(err: {
    message?: unknown;
    sqlMessage?: unknown;
    constraint?: unknown;
  }): string | undefined;
  /**
   * The column named by an error of a value too long for its column (MariaDB's `Data too long for column`: a Text value
   * over 65,535 bytes); '' when the error names no column; undefined when `err` is not such an error.
   */
  tooLongColumn(err: { code?: unknown; errno?: unknown; sqlMessage?: unknown }): string | undefined;
}

/** How much a site remembers of list results (site config result_cache_*). */
export interface ResultCacheLimits {
  /** Results at most; 0 remembers nothing. */
  entries: number;
  /** Approximate bytes of the remembered rows at most (about their JSON text). */
  bytes: number;
}

/** An open database, as the core uses it. */
export interface Database {
  knex: Knex;
  /** Outages as requests meet them: one log line per change, /api/ready's answer. */
  health: DatabaseHealth;
  /** How many list results may be remembered (site config result_cache_*; set when the site opens). */
  resultCache?: ResultCacheLimits;
  /** The schema DDL of the backend (migrate.ts). */
  schema: SchemaDialect;
  /** The statements patches run: column and table renames, a patch's own SQL (runtime/patches). */
  patchStatements: PatchStatements;
  /** Its driver's errors: unavailable (503), duplicate key (409). */
  errors: DriverErrors;
  /** How bulk items' writes run. */
  bulkWrites: BulkWrites;
  /** The row store of this database for the DocTypes of `registry`. */
  openRowStore(registry: Registry): RowStore;
  /**
   * Runs `work` in one write transaction (see write-transaction.ts): committed when it resolves, rolled back when it
   * throws. `grouped`: the work only inserts new rows, and may share a transaction with other such works.
   */
  transaction<T>(work: (q: Knex) => Promise<T>, grouped: boolean): Promise<T>;
  /**
   * A value that moves whenever `table` may have changed (compare two readings for equality), read through `q` (inside
   * a transaction, as its snapshot sees it).
   */
  changeVersion(q: Knex, table: string): Promise<string>;
  /** The change counter, where the backend keeps one (results remembered across processes, query/result-cache.ts). */
  changeCounter?: ChangeCounter;
  /** How this database's replicas are known to be fresh, where the backend has replicas (site config read_replicas). */
  replicaPositions?: ReplicaPositions;
  close(): Promise<void>;
}
