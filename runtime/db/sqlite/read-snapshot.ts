// Read snapshots on SQLite: the hot-path reads of one event-loop turn share one read transaction of the read connection.
import type BetterSqlite3 from 'better-sqlite3';
import { batchClock } from './group-commit';

/**
 * Returns the read connection for a read, opening a read transaction that the rest of the turn's reads share and
 * that ends in the turn's check phase. Each read outside a transaction takes and drops WAL locks (two system calls);
 * sharing them is about a tenth of a single-document GET under load.
 *
 * What a read sees stays what it would see alone, for this process: the snapshot is renewed as soon as the write
 * connection has changed rows since it began (`total_changes()`) or a group-commit batch has ended on it. None is kept
 * while the write connection is inside any other transaction (a knex transaction: its commit could land without a
 * further change). Inside an open batch one is: the batch's works are answered only after its commit, which renews
 * the snapshot. Commits by other processes become visible at the next turn, as they would a moment later anyway.
 */
export function createReadSnapshots(
  reader: BetterSqlite3.Database,
  writer: () => BetterSqlite3.Database | undefined,
): () => BetterSqlite3.Database {
  const begin = reader.prepare('BEGIN');
  const commit = reader.prepare('COMMIT');
  const counters = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Statement>();
  let changesAtStart = -1;
  let batchesAtStart = -1;
  let endScheduled = false;

  const writerChanges = (conn: BetterSqlite3.Database): number => {
    let statement = counters.get(conn);
    if (!statement) counters.set(conn, (statement = conn.prepare('SELECT total_changes()').pluck()));
    return statement.get() as number;
  };
  /** Whether the writer is inside a transaction other than an open group-commit batch. */
  const inOtherTransaction = (conn: BetterSqlite3.Database): boolean =>
    conn.inTransaction && batchClock(conn)?.inBatch !== true;
  const batchesEnded = (conn: BetterSqlite3.Database): number => batchClock(conn)?.batchesEnded ?? 0;
  const end = (): void => {
    try {
      if (reader.open && reader.inTransaction) commit.run();
    } catch {
      // A statement still running on the reader keeps the transaction; the next read ends it.
    }
  };
  const endOfTurn = (): void => {
    endScheduled = false;
    end();
  };

  return function readConnection(): BetterSqlite3.Database {
    const conn = writer();
    if (reader.inTransaction) {
      if (
        conn &&
        !inOtherTransaction(conn) &&
        batchesEnded(conn) === batchesAtStart &&
        writerChanges(conn) === changesAtStart
      )
        return reader;
      end();
      if (reader.inTransaction) return reader;
    }
    if (!conn || inOtherTransaction(conn)) return reader;
    changesAtStart = writerChanges(conn);
    batchesAtStart = batchesEnded(conn);
    begin.run();
    if (!endScheduled) {
      endScheduled = true;
      setImmediate(endOfTurn);
    }
    return reader;
  };
}
