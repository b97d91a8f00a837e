// MariaDB change counter: every statement that writes a `tab…` table bumps that table's row in `__Change`, in the same
// transaction (just before its COMMIT), or right after it when the statement ran outside one. Any process can then tell
// whether a result it remembers is still current with one small read (result-cache.ts). It watches the mysql2
// connections themselves, so every write is seen whatever sent it: row stores, bulk batches, jobs, scripts, raw knex.
// After the commit, and before the writer hears of it, `committed` runs (local invalidation, the Redis notice).
import { statementCall } from './statements';

/** The table of change versions: one row per DocType table and shard. */
export const CHANGE_TABLE = '__Change';

/**
 * Rows per table: a writer bumps the row of its connection's shard and readers add them up. The sum grows with every
 * commit all the same, and concurrent writers of one DocType rarely wait on the same row lock until their commit.
 */
export const CHANGE_SHARDS = 8;

/** The part of a mysql2 connection watched (knex's mysql2 client and the pool's `afterCreate` call `query`). */
export interface WatchedConnection {
  threadId: number | null;
  destroy(): void;
  query: (...args: unknown[]) => unknown;
  execute?: (...args: unknown[]) => unknown;
}

type Callback = (err: Error | null, ...rest: unknown[]) => void;

const BEGIN = /^\s*(?:begin|start\s+transaction)\b/i;
const COMMIT = /^\s*commit\b/i;
const ROLLBACK = /^\s*rollback\b(?!\s+to\b)/i;
// CREATE is no write: nothing can have been read from a table that did not exist.
const WRITE = /^\s*(?:insert|update|delete|replace|alter|drop|truncate|rename|load)\b/i;
/** ER_NO_SUCH_TABLE: before the first migration made `__Change`, no result can carry a version to bump. */
const NO_SUCH_TABLE = 1146;
const TABLE = /`(tab[^`]+)`/g;

/** The `tab…` tables a statement may write (every one it names, to be safe), or none when it writes nothing. */
export function writtenTables(sql: string): string[] {
  if (!WRITE.test(sql)) return [];
  const tables: string[] = [];
  for (const match of sql.matchAll(TABLE)) if (!tables.includes(match[1]!)) tables.push(match[1]!);
  return tables;
}

/** The UPDATE that bumps `n` tables' rows of one shard. */
function bumpSql(n: number): string {
  return `update \`${CHANGE_TABLE}\` set version = version + 1 where shard = ? and tab in (${new Array(n).fill('?').join(', ')})`;
}

/** Watches one database's connections and bumps the versions of the tables their statements write. */
export class TableChanges {
  /**
   * Runs after a commit that wrote `tables`, before the writer's callback: what was remembered from them is dropped
   * here and, with Redis, in the other processes. A failure does not undo the commit and is not the writer's.
   */
  committed: (tables: readonly string[]) => Promise<void> | void = () => undefined;

  constructor(private readonly statementMs: number) {}

  /**
   * Wraps `conn`'s `query` and `execute` (once per connection, when the pool creates it). A session with autocommit off
   * (the write pool's) is always in a transaction: its first statement opens one, COMMIT or ROLLBACK ends it.
   */
  watch(conn: WatchedConnection, options: { autocommit: boolean } = { autocommit: true }): void {
    const autocommitOff = !options.autocommit;
    const state = { inTransaction: autocommitOff, written: new Set<string>() };
    const query = conn.query.bind(conn);
    const bump = (tables: readonly string[], done: (err: Error | null) => void) =>
      query(
        { sql: bumpSql(tables.length), timeout: this.statementMs },
        [(conn.threadId ?? 0) % CHANGE_SHARDS, ...[...tables].sort()],
        (err: (Error & { errno?: number }) | null) => done(err?.errno === NO_SUCH_TABLE ? null : err),
      );
    // A bump that failed: past its timeout the connection is closed (mysql2 would leave the late answer queued on it,
    // and a ROLLBACK would wait behind it); otherwise (deadlock, lock wait) what is left of the transaction is rolled back.
    const failed = (err: Error & { code?: string }, callback: Callback, inTransaction: boolean) => {
      if (err.code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
        conn.destroy();
        return callback(err);
      }
      if (!inTransaction) return callback(err);
      query({ sql: 'ROLLBACK', timeout: this.statementMs }, () => callback(err));
    };
    const after = (tables: readonly string[], callback: Callback, rest: unknown[]) => {
      let result: Promise<void> | void;
      try {
        result = this.committed(tables);
      } catch {
        result = undefined;
      }
      if (!result) return callback(null, ...rest);
      result.then(
        () => callback(null, ...rest),
        () => callback(null, ...rest),
      );
    };
    const wrap =
      (original: (...args: unknown[]) => unknown) =>
      (...args: unknown[]): unknown => {
        const { sql, callback, last } = statementCall(args);
        if (typeof sql !== 'string' || typeof callback !== 'function') return original(...args);
        if (BEGIN.test(sql)) {
          state.inTransaction = true;
          state.written.clear();
          return original(...args);
        }
        if (ROLLBACK.test(sql)) {
          state.inTransaction = autocommitOff;
          state.written.clear();
          return original(...args);
        }
        if (COMMIT.test(sql)) {
          const tables = [...state.written];
          state.inTransaction = autocommitOff;
          state.written.clear();
          if (!tables.length) return original(...args);
          // The bump joins the transaction: it commits with the writes or not at all.
          bump(tables, (err) => {
            if (err) return failed(err, callback as Callback, true);
            args[last] = (err: Error | null, ...rest: unknown[]) =>
              err ? (callback as Callback)(err, ...rest) : after(tables, callback as Callback, rest);
            original(...args);
          });
          return undefined;
        }
        const tables = writtenTables(sql);
        if (!tables.length) return original(...args);
        if (state.inTransaction) {
          for (const table of tables) state.written.add(table);
          return original(...args);
        }
        // Outside a transaction the write commits by itself: the bump follows it, before the writer hears back.
        args[last] = (err: Error | null, ...rest: unknown[]) => {
          if (err) return (callback as Callback)(err, ...rest);
          bump(tables, (bumpErr) =>
            bumpErr
              ? failed(bumpErr, callback as Callback, false)
              : after(tables, callback as Callback, rest),
          );
        };
        return original(...args);
      };
    conn.query = wrap(query);
    if (conn.execute) conn.execute = wrap(conn.execute.bind(conn));
  }
}
