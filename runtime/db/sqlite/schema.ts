// SQLite's schema DDL for migrate.ts: catalogue reads from sqlite_master and PRAGMA table_info, CREATE TABLE statements
// run in one `exec`, a migration run under the lock file's lock (migration-lock.ts: a second process starting at once
// waits for it), the sync in one transaction begun IMMEDIATE, each DocType in a savepoint, and type changes as a table rebuild (SQLite cannot alter a
// column's type): new table, INSERT … SELECT (SQLite converts each value to the new column's affinity), drop, rename,
// indexes again.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { inDdlSavepoint } from '../ddl-savepoint';
import { DECIMAL_LIMITS, INTEGER_RANGE, assertNever } from '../../meta/field-types';
import type { ColumnTarget, LiveIndex, SchemaDialect } from '../backend';
import { createTable } from '../table-columns';
import { kindFamily, typeFamily } from '../type-families';
import { impossibleDateSql } from '../calendar-check';
import { migrationLockFile, withMigrationLock } from './migration-lock';

/** How long a sync waits for the write lock (ms), beyond the busy timeout of each attempt (a serving process writes). */
const LOCK_WAIT_MS = 10 * 60_000;
/** The page cache of a migration's connection while it runs, in KiB. */
const MIGRATION_CACHE_KB = 65536;

/** The type PRAGMA table_info reports for a column knex made for `target`. */
function sqliteType({ kind, length }: ColumnTarget): string {
  switch (kind) {
    case 'varchar':
      return `varchar(${length ?? 140})`;
    case 'text':
    case 'longtext':
    case 'json':
      return 'text';
    case 'int':
      return 'integer';
    case 'bigint':
      return 'bigint';
    case 'decimal':
    case 'rating':
      return 'float';
    case 'check':
      return 'tinyint';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'time':
      return 'time(6)';
    case 'table':
    case 'none':
      return '';
    default:
      return assertNever(kind);
  }
}

const isBusy = (err: unknown) =>
  /SQLITE_BUSY|database is locked/i.test(String((err as Error).message ?? err));

/** The schema DDL of SQLite, but the migration lock (which names the database file: sqliteSchema). */
const SQLITE_DDL: Omit<SchemaDialect, 'migrationLock'> = {
  async tables(knex) {
    const rows = await knex('sqlite_master').select({ name: 'name' }).where({ type: 'table' });
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  async indexes(knex, table) {
    const rows = (await knex('sqlite_master')
      .select('name', 'sql')
      .where({ type: 'index', tbl_name: table })) as { name: string; sql: string | null }[];
    const indexes = new Map<string, LiveIndex>();
    for (const row of rows)
      indexes.set(row.name, {
        unique: /^\s*create\s+unique\b/i.test(row.sql ?? ''),
        ...(row.sql ? { sql: row.sql } : {}),
      });
    return indexes;
  },

  async columns(knex, table) {
    const rows = (await knex.raw('select name, type from pragma_table_info(?)', [table])) as {
      name: string;
      type: string;
    }[];
    return new Map(rows.map((r) => [r.name, r.type.toLowerCase()]));
  },

  columnType: sqliteType,

  inexactValues(knex, column, from, to) {
    const source = typeFamily(from).family;
    const target = kindFamily(to.kind);
    const c = knex.raw('??', [column]).toQuery();
    if (target === 'text') {
      if (to.kind !== 'varchar') return undefined;
      return { sql: `length(cast(${c} as text)) > ?`, bindings: [to.length ?? 140] };
    }
    if (target === 'integer') {
      const range = INTEGER_RANGE[to.kind];
      const outside = range ? ` or cast(${c} as integer) not between ? and ?` : '';
      if (source === 'integer') return range ? { sql: outside.slice(4), bindings: range } : undefined;
      if (source !== 'text' && source !== 'decimal') return 'all';
      // The comparison applies numeric affinity to the stored text: '12' equals 12, '7.25' and 'abc' do not. So does
      // ' 42 ', which MariaDB and PostgreSQL refuse: text with spaces around it is refused here too.
      // Text also only of digits after its sign, as MariaDB's and PostgreSQL's patterns: '1.0' and '1e3' equal an
      // integer here but are refused there.
      const digits =
        source === 'text'
          ? ` or substr(${c}, case when ${c} glob '[+-]*' then 2 else 1 end) glob '*[^0-9]*'`
          : '';
      return {
        sql: `(not (cast(${c} as integer) = ${c}) or trim(${c}) <> ${c}${digits}${outside})`,
        bindings: range ?? [],
      };
    }
    if (target === 'decimal') {
      const limits = DECIMAL_LIMITS[to.kind];
      if (!limits) return undefined;
      const bounds = `abs(cast(${c} as real)) >= ? or round(cast(${c} as real), ?) <> cast(${c} as real)`;
      if (source === 'integer' || source === 'decimal')
        return { sql: `(${bounds})`, bindings: [limits.below, limits.places] };
      if (source !== 'text') return 'all';
      return {
        sql: `(not (cast(${c} as real) = ${c}) or trim(${c}) <> ${c} or ${bounds})`,
        bindings: [limits.below, limits.places],
      };
    }
    if (source === 'datetime' && target === 'date') return { sql: `time(${c}) <> '00:00:00'`, bindings: [] };
    // A date is that day at midnight: exact.
    if (source === 'date' && target === 'datetime') return undefined;
    if (source !== 'text') return source === target ? undefined : 'all';
    // date() answers a day that is not (2023-02-29) as another (2023-03-01): it is not the text then. Years before 1
    // and times past 23:59:59 are refused as on the other backends.
    if (target === 'date')
      return { sql: `(date(${c}) is not ${c} or ${impossibleDateSql(c, 'integer', false)})`, bindings: [] };
    if (target === 'datetime')
      return {
        sql: `(datetime(${c}) is null or ${c} not glob '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' or ${impossibleDateSql(c, 'integer', true)})`,
        bindings: [],
      };
    if (target === 'time') return { sql: `time(${c}) is null`, bindings: [] };
    return 'all';
  },

  changeColumnTypes(knex, { table, specs, kept, changed, indexes }) {
    const rebuilt = `${table}__rebuild`;
    const create = createTable(
      knex,
      rebuilt,
      specs.map((s) => ({ ...s, index: undefined })),
      (t) => {
        for (const [name, type] of kept) t.specificType(name, type).nullable();
      },
    );
    const columns = [...specs.map((s) => s.name), ...kept.keys()];
    const list = columns.map(() => '??').join(', ');
    // SQLite keeps a value's text as it is: a date (a column becoming Datetime) gets the midnight every datetime has.
    const toDatetime = new Set(
      specs.filter((s) => s.kind === 'datetime' && changed.includes(s.name)).map((s) => s.name),
    );
    const selected = columns.map((name) =>
      toDatetime.has(name) ? `case when length(??) = 10 then ?? || ' 00:00:00' else ?? end` : '??',
    );
    const selectedBindings = columns.flatMap((name) => (toDatetime.has(name) ? [name, name, name] : [name]));
    // The indexes move to the new table before it is filled (SQLite index names are global: the old ones go first).
    // Filled in key order, each index grows by appends; built after the fill, each would sort the whole table again.
    const on = new RegExp(` on [\`"]${table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\`"]`, 'i');
    const moved = [...indexes].flatMap(([name, index]) => (index.sql ? [{ name, sql: index.sql }] : []));
    const early = moved.every((i) => on.test(i.sql));
    const target = knex.raw('??', [rebuilt]).toQuery();
    return [
      ...(create.toSQL() as { sql: string }[]).map((s) => s.sql),
      ...(early
        ? [
            ...moved.map((i) => knex.raw('drop index ??', [i.name]).toQuery()),
            ...moved.map((i) => i.sql.replace(on, ` on ${target}`)),
          ]
        : []),
      knex
        .raw(`insert into ?? (${list}) select ${selected.join(', ')} from ?? order by ??`, [
          rebuilt,
          ...columns,
          ...selectedBindings,
          table,
          'name',
        ])
        .toQuery(),
      knex.raw('drop table ??', [table]).toQuery(),
      knex.raw('alter table ?? rename to ??', [rebuilt, table]).toQuery(),
      ...(early ? [] : moved.map((i) => i.sql)),
    ];
  },

  addIndex(knex, table, index, column, unique) {
    return knex.raw(`create ${unique ? 'unique ' : ''}index ?? on ?? (??)`, [index, table, column]).toQuery();
  },

  dropIndex(knex, _table, index) {
    return knex.raw('drop index ??', [index]).toQuery();
  },

  tableOptions() {
    // SQLite text is UTF-8 whatever the table says.
  },

  sequenceKey(table, column) {
    // A rowid alias (INTEGER PRIMARY KEY: the next id is the largest plus one), without AUTOINCREMENT, whose
    // sqlite_sequence row would be one more write per insert (the event log is written with every document).
    table.specificType(column, 'integer').primary();
  },

  /**
   * The statements knex builds run in one `exec` on the connection: knex prepares each statement, and a DDL statement
   * prepared on its own costs about a third more (thousands of them for large sets).
   */
  async createTables(knex: Knex, builders: Knex.SchemaBuilder[]) {
    const statements = builders.flatMap((b) => b.toSQL() as { sql: string; bindings: readonly unknown[] }[]);
    // Column defaults are written into the SQL text on SQLite; a statement with bindings could not run through exec.
    if (statements.some((s) => s.bindings.length)) throw new Error('a CREATE TABLE statement has bindings');
    if (!statements.length) return;
    const connection = (await knex.client.acquireConnection()) as BetterSqlite3.Database;
    try {
      connection.exec(statements.map((s) => s.sql).join(';\n'));
    } finally {
      await knex.client.releaseConnection(connection);
    }
  },

  /**
   * One transaction, begun IMMEDIATE so that it holds the write lock before it reads anything (a serving process's
   * writes wait for it: busy timeout, then again until LOCK_WAIT_MS). knex keeps one connection for SQLite, so the
   * statements between BEGIN and COMMIT all run on it.
   */
  async applySync(knex, _doctypes, work) {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await knex.raw('begin immediate');
        break;
      } catch (err) {
        if (!isBusy(err) || Date.now() > deadline) throw err;
      }
    }
    // A table rebuild sorts its indexes and fills a new table within the transaction: with the site's small page cache
    // (sqlite_cache_kb, 2 MiB) both spill to disk; 64 MiB for the run halves a 500,000-row rebuild.
    const [{ cache_size: cache }] = (await knex.raw('pragma cache_size')) as [{ cache_size: number }];
    await knex.raw(`pragma cache_size = ${Math.min(cache < 0 ? cache : -cache * 4, -MIGRATION_CACHE_KB)}`);
    try {
      await work(knex);
      await knex.raw('commit');
    } catch (err) {
      await knex.raw('rollback').catch(() => undefined);
      throw err;
    } finally {
      await knex.raw(`pragma cache_size = ${Math.trunc(cache)}`);
    }
  },

  ddlRollsBack: true,

  atomically: inDdlSavepoint,
};

/** The schema DDL of the SQLite database `file`: its migration lock is the lock file beside it. */
export function sqliteSchema(file: string): SchemaDialect {
  const lockFile = migrationLockFile(file);
  return { ...SQLITE_DDL, migrationLock: (_knex, work) => withMigrationLock(lockFile, work) };
}
