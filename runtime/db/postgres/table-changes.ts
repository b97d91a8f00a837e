// Which DocType tables each PostgreSQL commit wrote, as this process's connections see it. The versions themselves
// move in the database (change-table.ts: a statement trigger bumps `__Change` in the writing transaction, whatever
// connection wrote); this only tells the process, after a commit and before the writer hears of it, so that `committed`
// runs (the Redis change notice the other processes count instead of reading versions: query/change-stamps.ts). It
// watches the node-postgres connections themselves (the pool's `afterCreate`), so every write the service sends is seen:
// row stores, bulk batches, jobs, scripts, raw knex.

/** The part of a node-postgres connection watched (knex and the row store call `query`). */
export interface WatchedConnection {
  query: (...args: unknown[]) => unknown;
}

type Callback = (err: Error | null, result?: unknown) => void;

const BEGIN = /^\s*(?:begin|start\s+transaction)\b/i;
const COMMIT = /^\s*(?:commit|end)\b/i;
const ROLLBACK = /^\s*(?:rollback|abort)\b(?!\s+to\b)/i;
// CREATE is no write: nothing can have been read from a table that did not exist.
const WRITE = /^\s*(?:insert|update|delete|merge|alter|drop|truncate|copy)\b/i;
/** A statement with a WITH clause writes when a data-modifying part is in it. */
const WITH_WRITE = /^\s*with\b[\s\S]*\b(?:insert|update|delete|merge)\b/i;
const TABLE = /"(tab(?:[^"]|"")+)"/g;

/** The `tab…` tables a statement may write (every one it names, to be safe), or none when it writes nothing. */
export function writtenTables(sql: string): string[] {
  if (!WRITE.test(sql) && !WITH_WRITE.test(sql)) return [];
  const tables: string[] = [];
  for (const match of sql.matchAll(TABLE)) {
    const table = match[1]!.replace(/""/g, '"');
    if (!tables.includes(table)) tables.push(table);
  }
  return tables;
}

/** The SQL text of a `query` call: a string, or a query config's `text`; undefined for anything else (a stream). */
function textOf(first: unknown): string | undefined {
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object' && !('submit' in first)) {
    const text = (first as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/** Watches one database's connections and reports the tables each commit wrote. */
export class TableChanges {
  /**
   * Runs after a commit that wrote `tables`, before the writer hears of it: what was remembered from them is dropped
   * here and, with Redis, in the other processes. A failure does not undo the commit and is not the writer's.
   */
  committed: (tables: readonly string[]) => Promise<void> | void = () => undefined;

  /** Wraps `conn`'s `query` (once per connection, when the pool creates it). */
  watch(conn: WatchedConnection): void {
    const state = { inTransaction: false, written: new Set<string>() };
    const query = conn.query.bind(conn);
    /** Runs `committed` for `tables` and then hands `result` on: a listener's failure is not the writer's. */
    const after = async (tables: readonly string[]): Promise<void> => {
      try {
        await this.committed(tables);
      } catch {
        // the commit stands; the notice is lost as if Redis were down
      }
    };
    conn.query = (...args: unknown[]): unknown => {
      const sql = textOf(args[0]);
      if (sql === undefined) return query(...args);
      let tables: string[];
      if (BEGIN.test(sql)) {
        state.inTransaction = true;
        state.written.clear();
        return query(...args);
      } else if (ROLLBACK.test(sql)) {
        state.inTransaction = false;
        state.written.clear();
        return query(...args);
      } else if (COMMIT.test(sql)) {
        tables = [...state.written];
        state.inTransaction = false;
        state.written.clear();
      } else {
        tables = writtenTables(sql);
        if (state.inTransaction) {
          for (const table of tables) state.written.add(table);
          return query(...args);
        }
      }
      // A COMMIT that wrote tables, or a write outside a transaction (it commits by itself): `committed` runs once it
      // has succeeded, before the caller hears. A COMMIT of a failed transaction answers ROLLBACK: nothing committed.
      if (!tables.length) return query(...args);
      const wrote = (result: unknown) =>
        (result as { command?: unknown } | undefined)?.command !== 'ROLLBACK';
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (err: Error | null, result?: unknown) => {
          if (err || !wrote(result)) return (callback as Callback)(err, result);
          void after(tables).then(() => (callback as Callback)(null, result));
        };
        return query(...args);
      }
      return (query(...args) as Promise<unknown>).then(async (result) => {
        if (wrote(result)) await after(tables);
        return result;
      });
    };
  }
}
