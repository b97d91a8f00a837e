// knex's `pg` client as the service needs it on PostgreSQL, so the core's knex queries answer as on MariaDB without the
// core knowing: Frappe's PostgreSQL column types (Int bigint, Datetime timestamp without time zone), NULLs first in an
// ascending ORDER BY (last in a descending one) with indexes that serve that order, `like` case-insensitive (ILIKE) on any column, booleans bound as 0/1
// (Check columns are smallint), and numbers, timestamps, dates and times read as MariaDB's driver hands them over.
import knexFactory, { type Knex } from 'knex';
import { knexDialect } from '../knex-dialect';
import { KNEX_LOG } from '../knex-log';
import { answeredWithin } from './read-timeout';

/** pg type OIDs the service reads its own way. */
const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
} as const;

const asText = (value: string) => value;

/** How each pg type is parsed: counts and bigints as numbers, decimals as numbers, dates and times as their text. */
const PARSERS = new Map<number, (value: string) => unknown>([
  [OID.int8, Number],
  [OID.numeric, Number],
  [OID.date, asText],
  [OID.time, asText],
  [OID.timestamp, asText],
  [OID.timestamptz, asText],
]);

/** pg's own parsers: pg is loaded by the first PostgreSQL connection, so a SQLite or MariaDB process never loads it. */
let pgParsers: typeof import('pg').types | undefined;

/** The type parsers of every connection (node-postgres' `types` option; the global defaults stay untouched). */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    return (
      PARSERS.get(oid) ??
      (pgParsers ??= (require('pg') as typeof import('pg')).types).getTypeParser(oid, format)
    );
  },
};

/**
 * The query engine's LIKE conditions (query/build-where.ts): a pattern with `\` as its escape. On PostgreSQL they become
 * ILIKE (case-insensitive, as MariaDB's collation) on the column's text (as MariaDB compares numbers with LIKE).
 */
const LIKE_CONDITION = /^\?\? (not )?like \? escape \?$/;

/** A value as PostgreSQL should get it: booleans as 0/1, as MariaDB and SQLite store Check fields. */
export function pgValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** Where NULLs go in an ORDER BY item: first ascending and last descending, as on MariaDB and SQLite. */
function nullsFor(direction: unknown): 'first' | 'last' {
  return String(direction ?? 'asc').toLowerCase() === 'desc' ? 'last' : 'first';
}

/** knex's query builder, as far as it is overridden here (its public `orderBy`). */
type BuilderClass = new (client: unknown) => {
  orderBy(column: unknown, direction?: unknown, nulls?: string): unknown;
};

/** knex's `pg` client class and its compilers, as far as they are overridden here (not in knex's typings). */
type ClientClass = typeof Knex.Client & {
  prototype: Knex.Client & {
    columnCompiler(...args: unknown[]): object;
    tableCompiler(...args: unknown[]): object;
  };
};

/** The service's PostgreSQL knex client class. */
export type PostgresClientClass = Pick<typeof Knex.Client, keyof typeof Knex.Client> &
  (new (config: Knex.Config) => Knex.Client & {
    /** Whether this client's statements get the connection's client-side limit (read-timeout.ts). */
    limitsStatements(): boolean;
  });

let made: PostgresClientClass | undefined;

/** The service's PostgreSQL knex client class (a subclass of knex's `pg` client), made once. */
export function postgresClient(): PostgresClientClass {
  if (made) return made;
  const Base = knexDialect('pg') as ClientClass;
  // knex exports its query builder class only through a client's public queryBuilder().
  const probe = knexFactory({ client: Base, log: KNEX_LOG });
  const QueryBuilder = probe.client.queryBuilder().constructor as BuilderClass;
  void probe.destroy();

  // An ORDER BY item without NULLS FIRST/LAST gets the other databases' order (knex's public orderBy, every form).
  class ServiceQueryBuilder extends QueryBuilder {
    override orderBy(column: unknown, direction?: unknown, nulls?: string): unknown {
      if (!Array.isArray(column)) return super.orderBy(column, direction, nulls || nullsFor(direction));
      const items = column.map((item: unknown) => {
        if (typeof item === 'string' || typeof item === 'number') return { column: item, nulls: 'first' };
        if (typeof item !== 'object' || item === null || Object.getPrototypeOf(item) !== Object.prototype)
          return item;
        const { order, nulls: given } = item as { order?: unknown; nulls?: string };
        return { ...item, nulls: given || nullsFor(order) };
      });
      return super.orderBy(items);
    }
  }

  const columnCompilerOf = Base.prototype.columnCompiler;
  const tableCompilerOf = Base.prototype.tableCompiler;
  class ServicePostgresClient extends Base {
    override queryBuilder(): Knex.QueryBuilder {
      // An instance of knex's own builder class (the one its queryBuilder() makes), typed here by its orderBy only.
      const builder: object = new ServiceQueryBuilder(this);
      return builder as Knex.QueryBuilder;
    }

    override columnCompiler(...args: unknown[]): object {
      const compiler = columnCompilerOf.apply(this, args) as Record<string, unknown>;
      compiler.integer = 'bigint';
      compiler.datetime = (options: { precision?: number } | boolean | undefined, precision?: number) => {
        const p = typeof options === 'object' ? options.precision : precision;
        return p === undefined || p === null ? 'timestamp' : `timestamp(${p})`;
      };
      return compiler;
    }

    // Plain indexes keep NULLs first: read forwards they serve `asc nulls first`, backwards `desc nulls last`, the order
    // every list asks for (a default index would serve neither, and each list would sort the whole table).
    override tableCompiler(...args: unknown[]): object {
      const compiler = tableCompilerOf.apply(this, args) as {
        index: (...a: unknown[]) => void;
        unique: (columns: unknown, options?: unknown) => void;
      };
      const index = compiler.index;
      const unique = compiler.unique;
      // A unique index, not a constraint: the migration drops it as any index (DROP INDEX), and ON CONFLICT uses it.
      compiler.unique = (columns: unknown, options?: unknown) => {
        const named = typeof options === 'object' && options !== null ? options : { indexName: options };
        unique.call(compiler, columns, { ...named, useConstraint: false });
      };
      compiler.index = (columns: unknown, ...rest: unknown[]) => {
        const list = (Array.isArray(columns) ? columns : [columns]).map((c) =>
          typeof c === 'string' ? this.raw('?? nulls first', [c]) : c,
        );
        index.call(compiler, list, ...rest);
      };
      return compiler;
    }

    /**
     * Whether this client's statements get the connection's client-side limit (read-timeout.ts): the pool's do; those
     * of a knex transaction (the migration) run as long as they take. Held connections override it
     * (held-connection.ts).
     */
    limitsStatements(): boolean {
      return (this as { transacting?: unknown }).transacting !== true;
    }

    override query(connection: object, obj: unknown): Promise<unknown> {
      const running = super.query(connection, obj) as Promise<unknown>;
      return this.limitsStatements() ? answeredWithin(connection, running) : running;
    }

    override raw(sql: unknown, ...rest: unknown[]): Knex.Raw {
      const match = typeof sql === 'string' ? LIKE_CONDITION.exec(sql) : null;
      const text = match ? `??::text ${match[1] ?? ''}ilike ? escape ?` : sql;
      return (Base.prototype.raw as (...a: unknown[]) => Knex.Raw).call(this, text, ...rest);
    }

    override prepBindings(bindings: unknown[] | undefined): unknown[] | undefined {
      return (Base.prototype.prepBindings as (b: unknown[] | undefined) => unknown[] | undefined).call(
        this,
        bindings?.map(pgValue),
      );
    }
  }
  made = ServicePostgresClient;
  return made;
}
