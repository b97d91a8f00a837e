// MariaDB/MySQL's schema DDL for migrate.ts: catalogue reads from information_schema, utf8mb4 tables, each DDL statement
// on its own (MariaDB commits each implicitly), type changes as ALTER TABLE … MODIFY (the server converts the values),
// indexes added online (ALGORITHM=INPLACE, LOCK=NONE: reads and writes go on while InnoDB builds them), a migration run
// under GET_LOCK (per database: processes starting together migrate one at a time), and the change counter's rows.
import type { Knex } from 'knex';
import type { DocTypeMeta } from '../../meta/types';
import { DECIMAL_LIMITS, INTEGER_RANGE, assertNever } from '../../meta/field-types';
import type { ColumnTarget, LiveIndex, SchemaDialect } from '../backend';
import { kindFamily, typeFamily } from '../type-families';
import { impossibleDateSql } from '../calendar-check';
import { CHANGE_SHARDS, CHANGE_TABLE } from './table-changes';

/** Change rows per INSERT (three bindings each). */
const CHANGE_ROWS_PER_INSERT = 300;

/**
 * The change versions of every DocType table (CHANGE_SHARDS rows each), created at 0 when missing. Writes only ever
 * update them, so a bump takes no gap lock; a table without rows is one a remembered result may not depend on.
 */
async function ensureChangeRows(knex: Knex, doctypes: readonly DocTypeMeta[]): Promise<void> {
  if (!(await knex.schema.hasTable(CHANGE_TABLE)))
    await knex.schema.createTable(CHANGE_TABLE, (t) => {
      t.string('tab', 160).notNullable();
      t.integer('shard').notNullable();
      t.bigInteger('version').notNullable().defaultTo(0);
      t.primary(['tab', 'shard']);
    });
  const known = new Set(((await knex(CHANGE_TABLE).distinct('tab')) as { tab: string }[]).map((r) => r.tab));
  const rows: { tab: string; shard: number; version: number }[] = [];
  for (const meta of doctypes) {
    if (meta.issingle || meta.isVirtual || known.has(meta.tableName)) continue;
    for (let shard = 0; shard < CHANGE_SHARDS; shard++) rows.push({ tab: meta.tableName, shard, version: 0 });
  }
  for (let i = 0; i < rows.length; i += CHANGE_ROWS_PER_INSERT)
    await knex(CHANGE_TABLE)
      .insert(rows.slice(i, i + CHANGE_ROWS_PER_INSERT))
      .onConflict(['tab', 'shard'])
      .ignore();
}

/** How long a migration waits for another process's lock, in seconds. */
const LOCK_WAIT_S = 600;

/** The type information_schema reports (display widths dropped: MariaDB says `int(11)`, MySQL 8 `int`). */
function mysqlType({ kind, length }: ColumnTarget): string {
  switch (kind) {
    case 'varchar':
      return `varchar(${length ?? 140})`;
    case 'text':
      return 'text';
    case 'longtext':
    case 'json':
      return 'longtext';
    case 'int':
      return 'int';
    case 'bigint':
      return 'bigint';
    case 'decimal':
      return 'decimal(21,9)';
    case 'rating':
      return 'decimal(3,2)';
    case 'check':
      return 'tinyint';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime(6)';
    case 'time':
      return 'time(6)';
    case 'table':
    case 'none':
      return '';
    default:
      return assertNever(kind);
  }
}

/** Patterns of text that converts exactly, per target kind (`\z`: PCRE's `$` also matches before a final newline). */
const EXACT_TEXT: Partial<Record<string, string>> = {
  int: '^[+-]?[0-9]+\\z',
  bigint: '^[+-]?[0-9]+\\z',
  check: '^[+-]?[0-9]+\\z',
  decimal: '^[+-]?[0-9]{1,12}([.][0-9]{0,9})?\\z',
  rating: '^[+-]?[0-9]([.][0-9]{0,2})?\\z',
  date: '^[0-9]{4}-[0-9]{2}-[0-9]{2}\\z',
  datetime: '^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?)?\\z',
  time: '^[0-9]{1,3}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?\\z',
};

/** Bytes an InnoDB index key holds (innodb_page_size 16k). */
const MAX_KEY_BYTES = 3072;

/** Bytes a TEXT column holds. */
const TEXT_BYTES = 65535;

/** The schema DDL of MariaDB/MySQL. */
export const MYSQL_SCHEMA: SchemaDialect = {
  async tables(knex) {
    const rows = await knex('information_schema.tables')
      .select({ name: 'table_name' })
      .where('table_schema', knex.raw('database()'));
    return new Set((rows as { name: string }[]).map((r) => r.name));
  },

  async indexes(knex, table) {
    const rows = (await knex('information_schema.statistics')
      .select({ name: 'index_name', nonUnique: 'non_unique' })
      .where('table_name', table)
      .andWhere('table_schema', knex.raw('database()'))) as { name: string; nonUnique: number | string }[];
    const indexes = new Map<string, LiveIndex>();
    for (const row of rows) indexes.set(row.name, { unique: Number(row.nonUnique) === 0 });
    return indexes;
  },

  async columns(knex, table) {
    const rows = (await knex('information_schema.columns')
      .select({ name: 'column_name', type: 'column_type' })
      .where('table_name', table)
      .andWhere('table_schema', knex.raw('database()'))) as { name: string; type: string }[];
    return new Map(
      rows.map((r) => [
        r.name,
        r.type.toLowerCase().replace(/^((?:tiny|small|medium|big)?int)\(\d+\)/, '$1'),
      ]),
    );
  },

  columnType: mysqlType,

  inexactValues(knex, column, from, to) {
    const source = typeFamily(from).family;
    const target = kindFamily(to.kind);
    const c = knex.raw('??', [column]).toQuery();
    if (target === 'text') {
      if (to.kind === 'varchar') return { sql: `char_length(${c}) > ?`, bindings: [to.length ?? 140] };
      return to.kind === 'text' ? { sql: `length(${c}) > ?`, bindings: [TEXT_BYTES] } : undefined;
    }
    const pattern = EXACT_TEXT[to.kind];
    if (target === 'integer') {
      const range = INTEGER_RANGE[to.kind];
      const outside = range ? `${c} not between ? and ?` : '';
      if (source === 'integer') return range ? { sql: outside, bindings: range } : undefined;
      if (source === 'decimal')
        return { sql: `(${c} <> truncate(${c}, 0)${range ? ` or ${outside}` : ''})`, bindings: range ?? [] };
      if (source !== 'text' || !pattern) return 'all';
      return {
        sql: `(${c} not regexp ?${range ? ` or cast(${c} as decimal(65, 0)) not between ? and ?` : ''})`,
        bindings: [pattern, ...(range ?? [])],
      };
    }
    if (target === 'decimal') {
      const limits = DECIMAL_LIMITS[to.kind];
      if (!limits) return undefined;
      if (source === 'integer' || source === 'decimal')
        return { sql: `(abs(${c}) >= ? or ${c} <> round(${c}, ?))`, bindings: [limits.below, limits.places] };
      if (source !== 'text' || !pattern) return 'all';
      return { sql: `${c} not regexp ?`, bindings: [pattern] };
    }
    if (source === 'datetime' && target === 'date') return { sql: `time(${c}) <> '00:00:00'`, bindings: [] };
    // A date is that day at midnight: exact.
    if (source === 'date' && target === 'datetime') return undefined;
    if (source !== 'text' || !pattern) return source === target ? undefined : 'all';
    // A value of the right shape that is no real date (2024-02-30) would fail the ALTER: counted with the rest.
    if (target === 'date' || target === 'datetime')
      return {
        sql: `(case when ${c} regexp ? then ${impossibleDateSql(c, 'signed', target === 'datetime')} else true end)`,
        bindings: [pattern],
      };
    return { sql: `${c} not regexp ?`, bindings: [pattern] };
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

  /**
   * Online (INPLACE, LOCK=NONE), but for a unique index on a varchar longer than an InnoDB key holds (utf8mb4: 4 bytes a
   * character): MariaDB makes that one a hash over a hidden virtual column, which only ALGORITHM=COPY can add.
   */
  addIndex(knex, table, index, column, unique, target) {
    const online = !(unique && target.kind === 'varchar' && (target.length ?? 140) * 4 > MAX_KEY_BYTES);
    return knex
      .raw(
        `alter table ?? add ${unique ? 'unique ' : ''}index ?? (??)${online ? ', algorithm=inplace, lock=none' : ''}`,
        [table, index, column],
      )
      .toQuery();
  },

  dropIndex(knex, table, index) {
    return knex.raw('alter table ?? drop index ??', [table, index]).toQuery();
  },

  tableOptions(table) {
    table.charset('utf8mb4');
  },

  sequenceKey(table, column) {
    table.bigIncrements(column);
  },

  async createTables(_knex, builders) {
    for (const builder of builders) await builder;
  },

  /**
   * Under GET_LOCK, named after the database and held by a connection of its own: a second process waits up to
   * LOCK_WAIT_S for it, then finds nothing pending. The lock goes with its connection if the process dies.
   */
  async migrationLock(knex, work) {
    const connection: unknown = await knex.client.acquireConnection();
    try {
      const [rows] = (await knex
        .raw("select get_lock(concat('svc_migrate:', database()), ?) as got", [LOCK_WAIT_S])
        .options({ timeout: (LOCK_WAIT_S + 5) * 1000 })
        .connection(connection)) as [{ got: number | null }[]];
      if (Number(rows[0]?.got) !== 1)
        throw new Error(`another process has held the migration lock for ${LOCK_WAIT_S} s`);
      try {
        return await work();
      } finally {
        await knex
          .raw("select release_lock(concat('svc_migrate:', database()))")
          .connection(connection)
          .catch(() => undefined);
      }
    } finally {
      await knex.client.releaseConnection(connection);
    }
  },

  /** MariaDB commits each DDL statement implicitly, so the statements run as they are; then the change rows. */
  async applySync(knex, doctypes, work) {
    await work(knex);
    await ensureChangeRows(knex, doctypes);
  },

  ddlRollsBack: false,

  async atomically(_knex, work) {
    await work();
  },
};
