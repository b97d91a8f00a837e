// PostgreSQL's schema DDL for migrate.ts: catalogue reads of the connection's schema (current_schema(), types as
// format_type spells them), and a whole migration in one transaction (PostgreSQL's DDL is transactional: a failed run
// leaves no half-made table) under a transaction-level advisory lock (processes starting together migrate one at a
// time), each DocType in a savepoint, type changes as ALTER COLUMN … TYPE … USING (the server converts the values and
// rebuilds the indexes), and the change triggers. Column types come from the knex client (client.ts: Frappe's
// PostgreSQL types).
import type { Knex } from 'knex';
import { inDdlSavepoint } from '../ddl-savepoint';
import { DECIMAL_LIMITS, assertNever } from '../../meta/field-types';
import type { ColumnTarget, LiveIndex, SchemaDialect } from '../backend';
import { kindFamily, typeFamily } from '../type-families';
import { impossibleDateSql } from '../calendar-check';
import { ensureChangeRows } from './change-table';
import type { PgConnection } from './statements';

/** How long a migration waits for another process's lock (ms). */
const LOCK_WAIT_MS = 10 * 60_000;

/**
 * The values PostgreSQL's integer column of a kind takes, where narrower than bigint (Int is bigint, as in Frappe): a
 * Check 0 and 1 only, as on the other databases.
 */
const PG_INTEGER_RANGE: Partial<Record<ColumnTarget['kind'], readonly [number, number]>> = {
  check: [0, 1],
};

/** A type as format_type spells it, in the words MariaDB uses (`character varying(140)` → `varchar(140)`). */
function shortType(type: string): string {
  return type
    .toLowerCase()
    .replace(/^character varying/, 'varchar')
    .replace(/ without time zone$/, '');
}

/** The type `columns` reports for a column knex made for `target` (client.ts: Int is bigint, Check smallint). */
function postgresType({ kind, length }: ColumnTarget): string {
  switch (kind) {
    case 'varchar':
      return `varchar(${length ?? 140})`;
    case 'text':
    case 'longtext':
    case 'json':
      return 'text';
    case 'int':
    case 'bigint':
      return 'bigint';
    case 'decimal':
      return 'numeric(21,9)';
    case 'rating':
      return 'numeric(3,2)';
    case 'check':
      return 'smallint';
    case 'date':
      return 'date';
    case 'datetime':
      return 'timestamp(6)';
    case 'time':
      return 'time(6)';
    case 'table':
    case 'none':
      return '';
    default:
      return assertNever(kind);
  }
}

/** Patterns (POSIX, PostgreSQL's `~`) of text that converts exactly, per target kind. */
const EXACT_TEXT: Partial<Record<string, string>> = {
  int: '^[+-]?[0-9]{1,18}$',
  bigint: '^[+-]?[0-9]{1,18}$',
  check: '^[+-]?[0-9]{1,5}$',
  decimal: '^[+-]?[0-9]{1,12}([.][0-9]{0,9})?$',
  rating: '^[+-]?[0-9]([.][0-9]{0,2})?$',
  date: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  datetime: '^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?)?$',
  time: '^[0-9]{1,2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?$',
};

/** PostgreSQL's code for a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/** The schema DDL of PostgreSQL. */
export const POSTGRES_SCHEMA: SchemaDialect = {
  async tables(knex) {
    const rows = await knex('pg_catalog.pg_tables')
      .select({ name: 'tablename' })
      .where('schemaname', knex.raw('current_schema()'));
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  async indexes(knex, table) {
    const { rows } = (await knex.raw(
      `select c.relname as name, i.indisunique as "unique", i.indisprimary as "primary"
         from pg_catalog.pg_index i
         join pg_catalog.pg_class c on c.oid = i.indexrelid
         join pg_catalog.pg_class t on t.oid = i.indrelid
         join pg_catalog.pg_namespace n on n.oid = t.relnamespace
        where t.relname = ? and n.nspname = current_schema()`,
      [table],
    )) as { rows: { name: string; unique: boolean; primary: boolean }[] };
    const indexes = new Map<string, LiveIndex>();
    // The primary key's index is named `<table>_pkey` here (MariaDB: PRIMARY); the planner never touches it.
    for (const row of rows) if (!row.primary) indexes.set(row.name, { unique: row.unique });
    return indexes;
  },

  async columns(knex, table) {
    const { rows } = (await knex.raw(
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
         from pg_catalog.pg_attribute a
         join pg_catalog.pg_class t on t.oid = a.attrelid
         join pg_catalog.pg_namespace n on n.oid = t.relnamespace
        where t.relname = ? and n.nspname = current_schema() and a.attnum > 0 and not a.attisdropped`,
      [table],
    )) as { rows: { name: string; type: string }[] };
    return new Map(rows.map((r) => [r.name, shortType(r.type)]));
  },

  columnType: postgresType,

  // PostgreSQL does not promise to evaluate `a or b` left to right: a cast that may fail sits behind a CASE.
  inexactValues(knex, column, from, to) {
    const source = typeFamily(from).family;
    const target = kindFamily(to.kind);
    const c = knex.raw('??', [column]).toQuery();
    if (target === 'text') {
      if (to.kind === 'varchar') return { sql: `char_length(${c}::text) > ?`, bindings: [to.length ?? 140] };
      return undefined;
    }
    const pattern = EXACT_TEXT[to.kind];
    if (target === 'integer') {
      const range = PG_INTEGER_RANGE[to.kind];
      if (source === 'integer')
        return range ? { sql: `${c} not between ? and ?`, bindings: range } : undefined;
      if (source === 'decimal')
        return {
          sql: `(${c} <> trunc(${c})${range ? ` or ${c} not between ? and ?` : ''})`,
          bindings: range ?? [],
        };
      if (source !== 'text' || !pattern) return 'all';
      return {
        sql: `(case when ${c} ~ ? then ${range ? `${c}::numeric not between ? and ?` : 'false'} else true end)`,
        bindings: [pattern, ...(range ?? [])],
      };
    }
    if (target === 'decimal') {
      const limits = DECIMAL_LIMITS[to.kind];
      if (!limits) return undefined;
      if (source === 'integer' || source === 'decimal')
        return { sql: `(abs(${c}) >= ? or ${c} <> round(${c}, ?))`, bindings: [limits.below, limits.places] };
      if (source !== 'text' || !pattern) return 'all';
      return { sql: `${c} !~ ?`, bindings: [pattern] };
    }
    if (source === 'datetime' && target === 'date') return { sql: `${c}::time <> '00:00:00'`, bindings: [] };
    // A date is that day at midnight: exact.
    if (source === 'date' && target === 'datetime') return undefined;
    if (source !== 'text' || !pattern) return source === target ? undefined : 'all';
    // A value of the right shape that is no real date (2024-02-30) would fail the ALTER: counted with the rest.
    if (target === 'date' || target === 'datetime')
      return {
        sql: `(case when ${c} ~ ? then ${impossibleDateSql(c, 'integer', target === 'datetime')} else true end)`,
        bindings: [pattern],
      };
    return { sql: `${c} !~ ?`, bindings: [pattern] };
  },

  changeColumnTypes(knex, { table, specs, changed }) {
    return specs
      .filter((spec) => changed.includes(spec.name))
      .flatMap((spec) =>
        (
          knex.schema
            .alterTable(table, (t) => {
              spec.add(t)?.alter();
            })
            .toSQL() as { sql: string; bindings: readonly Knex.Value[] }[]
        ).map((s) => knex.raw(s.sql, s.bindings).toQuery()),
      );
  },

  addIndex(knex, table, index, column, unique) {
    // NULLs first, as every index of the service here (client.ts): one index serves `asc` and `desc` lists.
    return knex
      .raw(`create ${unique ? 'unique ' : ''}index ?? on ?? (?? nulls first)`, [index, table, column])
      .toQuery();
  },

  dropIndex(knex, _table, index) {
    return knex.raw('drop index ??', [index]).toQuery();
  },

  tableOptions() {
    // PostgreSQL text is the database's encoding (UTF-8) whatever the table says.
  },

  sequenceKey(table, column) {
    // bigserial: a sequence, never reused (a rolled-back transaction leaves a gap, as on MariaDB).
    table.bigIncrements(column);
  },

  async createTables(knex, builders) {
    for (const builder of builders) await builder;
  },

  /**
   * One transaction: the system tables, the DocType tables, their hashes and history, the change rows and triggers
   * commit together or not at all. It first takes a transaction-level advisory lock named after the database, so a
   * second process waits (up to LOCK_WAIT_MS) and then finds nothing pending; statements of the run have no time limit
   * (a type change rewrites the table).
   */
  /**
   * A session-level advisory lock on a connection of its own, held for the whole run (patches and the sync); another
   * process waits up to LOCK_WAIT_MS. Its key differs from the sync's transaction-level lock, which the run's own
   * connections take while this one holds its lock.
   */
  async migrationLock(knex, work) {
    // Straight on the node-postgres connection: the wait may be long, past the pool's client-side limit.
    const connection = (await knex.client.acquireConnection()) as PgConnection;
    try {
      // The wait is bounded by lock_timeout alone: the session's statement_timeout (db_statement_timeout, a request's
      // limit) would end it after seconds while another process runs a long patch.
      await connection.query(`set lock_timeout = ${LOCK_WAIT_MS}`);
      await connection.query('set statement_timeout = 0');
      try {
        await connection.query("select pg_advisory_lock(hashtext('svc_migrate_run:' || current_database()))");
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        throw new Error(`another process has held the migration lock for ${LOCK_WAIT_MS / 1000} s`);
      }
      try {
        return await work();
      } finally {
        await connection
          .query("select pg_advisory_unlock(hashtext('svc_migrate_run:' || current_database()))")
          .catch(() => undefined);
      }
    } finally {
      // Back to the session's own (db_busy_timeout and db_statement_timeout, from the connection's start-up packet).
      await connection.query('reset lock_timeout').catch(() => undefined);
      await connection.query('reset statement_timeout').catch(() => undefined);
      await knex.client.releaseConnection(connection);
    }
  },

  /** PostgreSQL's DDL is transactional: a failed DocType rolls back to its savepoint, a failed run to nothing. */
  ddlRollsBack: true,

  async applySync(knex, doctypes, work) {
    await knex.transaction(async (trx) => {
      await trx.raw(`set local lock_timeout = ${LOCK_WAIT_MS}`);
      await trx.raw('set local statement_timeout = 0');
      await trx.raw("select pg_advisory_xact_lock(hashtext('svc_migrate:' || current_database()))");
      await work(trx);
      await ensureChangeRows(trx, doctypes);
    });
  },

  atomically: inDdlSavepoint,
};
