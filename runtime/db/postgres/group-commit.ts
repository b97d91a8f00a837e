// Group commit on PostgreSQL: concurrent creates share one transaction, committed once. A transaction of its own cost a
// create BEGIN, its INSERTs and COMMIT (a WAL flush per COMMIT); in a batch BEGIN and COMMIT are paid once for all its
// works, and the answers of a batch go out in the same turn. The works run one at a time on a pooled connection (a
// lane); a few lanes run side by side, each taking the next queued work when it is free, so a batch is what queued up
// while the lane was busy, and what came in during the rest of the event-loop turn in which it ran out of works: one
// work when the service is quiet, many under load. The design of MariaDB's (mysql/group-commit.ts), with PostgreSQL's
// rule that a failed statement aborts the whole transaction.
import type { Knex } from 'knex';
import { BatchLanes, GROUP_COMMIT_LANES, GROUP_COMMIT_MAX_WORKS, type Queued } from '../batch-lanes';
import type { QueryResult } from 'pg';
import { isDeadlockError } from '../unavailable';
import { POSTGRES_ERRORS } from './errors';
import { execute, quoteIdent, type PgConnection, type SendStatement } from './statements';
import { boundConnection, command, releaseOrClose, rolledBackError } from './transaction';

/** A read: it changes nothing in the transaction (a locking read takes locks, which the batch keeps). */
const READ = /^\s*\(?\s*(?:select|show|values|explain|table)\b/i;
/** A statement after which the batch's state is unknown: one that ends, begins or names a transaction boundary. */
const ENDS =
  /^\s*(?:commit|end|rollback(?!\s+to\b)|abort|begin|start\s+transaction|prepare\s+transaction|lock)\b/i;

/** What the statements sent on one connection did to its open transaction, counted as they answer. */
interface Touches {
  /** Statements other than reads that answered without an error. */
  writes: number;
  /** Statements that failed (PostgreSQL aborts the transaction, unless a savepoint is rolled back to) or ENDS. */
  unknown: number;
  /** Statements sent and not answered yet. */
  pending: number;
}

const touchesOf = new WeakMap<PgConnection, Touches>();

type Callback = (err: Error | null, result?: unknown) => void;

/** Rows of one table and column list held back in an open batch; `key` names the table and the columns. */
interface HeldRows {
  key: string;
  table: string;
  columns: readonly string[];
  rows: unknown[][];
}

/** Rows held back in an open batch, by their `key`. */
type Deferred = Map<string, HeldRows>;

/** The connections whose batch holds back its works' inserts (a work run again alone sends its own). */
const deferredOf = new WeakMap<PgConnection, Deferred>();

/**
 * Holds back the insert of one row of `table` (`values` in the order of `columns`) when `conn` runs a batch of the
 * group commit: a table's rows are sent as one INSERT just before the next statement on the connection, or before the
 * COMMIT, so that a batch's creates cost one round trip together instead of one each, and every statement still sees
 * them. False (nothing held) on any other connection: the caller sends the insert itself.
 */
export function deferInsert(
  conn: PgConnection,
  table: string,
  columns: readonly string[],
  values: unknown[],
): boolean {
  const deferred = deferredOf.get(conn);
  if (!deferred) return false;
  const key = `${table}\u0000${columns.join('\u0000')}`;
  const held = deferred.get(key);
  if (held) held.rows.push(values);
  else deferred.set(key, { key, table, columns, rows: [values] });
  // A held row is a write of its work: if the work fails, the batch's transaction holds it (see PostgresGroupCommit).
  (touchesOf.get(conn) as Touches).writes++;
  return true;
}

/** Placeholders per INSERT at most (PostgreSQL allows 65,535 per statement). */
const MAX_PLACEHOLDERS = 16_384;

/** Multi-row INSERT texts per table, columns and number of rows. */
const insertTexts = new Map<string, string>();

function insertText({ key: held, table, columns }: HeldRows, rows: number): string {
  const key = `${rows}\u0000${held}`;
  let sql = insertTexts.get(key);
  if (sql === undefined) {
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++)
      tuples.push(`(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
    sql = `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values ${tuples.join(', ')}`;
    if (insertTexts.size < 4096) insertTexts.set(key, sql);
  }
  return sql;
}

/** Each watched connection's own `query`, unwrapped: held rows are sent with it (they must not wait for themselves). */
const rawQueryOf = new WeakMap<PgConnection, SendStatement>();

/** A connection's held rows while they are being sent. */
const flushes = new WeakMap<PgConnection, Promise<boolean>>();

/**
 * Sends the rows `conn` holds back: one INSERT per table (in the order the tables were first written, split to stay
 * under MAX_PLACEHOLDERS), one after another, after any still being sent. Resolves whether they all went in; the
 * returned promise is also what the next statement on the connection waits for (watchTouches), so that it sees them.
 * Undefined when nothing is held or being sent.
 */
function sendDeferred(conn: PgConnection): Promise<boolean> | undefined {
  const deferred = deferredOf.get(conn);
  const before = flushes.get(conn);
  if (!deferred?.size) return before;
  const statements: [text: string, values: unknown[]][] = [];
  for (const held of deferred.values()) {
    const perStatement = Math.max(1, Math.floor(MAX_PLACEHOLDERS / Math.max(1, held.columns.length)));
    for (let start = 0; start < held.rows.length; start += perStatement) {
      const chunk = held.rows.slice(start, start + perStatement);
      statements.push([insertText(held, chunk.length), chunk.flat()]);
    }
  }
  deferred.clear();
  const flush = sendHeld(conn, statements, before);
  flushes.set(conn, flush);
  void flush.then(() => {
    if (flushes.get(conn) === flush) flushes.delete(conn);
  });
  return flush;
}

/**
 * Sends held INSERTs in turn (node-postgres deprecates a query sent while another runs), after `before`. A failure
 * aborts the transaction, so the rest are not sent; it counts as unknown (the batch runs again alone).
 */
async function sendHeld(
  conn: PgConnection,
  statements: readonly (readonly [string, unknown[]])[],
  before: Promise<boolean> | undefined,
): Promise<boolean> {
  if (before && !(await before)) return false;
  try {
    for (const [text, values] of statements) await execute(conn, text, values, rawQueryOf.get(conn));
    return true;
  } catch {
    const touches = touchesOf.get(conn);
    if (touches) touches.unknown++;
    return false;
  }
}

/** The SQL text of a `query` call (a string or a query config's `text`). */
function textOf(first: unknown): string | undefined {
  if (typeof first === 'string') return first;
  const text = first && typeof first === 'object' ? (first as { text?: unknown }).text : undefined;
  return typeof text === 'string' ? text : undefined;
}

/**
 * Counts what the statements sent on `conn` do to its transaction: wraps its `query` once (above the change reports of
 * table-changes.ts), so every statement is seen whatever sent it (row store, knex, scripts).
 */
function watchTouches(conn: PgConnection): Touches {
  const known = touchesOf.get(conn);
  if (known) return known;
  const touches: Touches = { writes: 0, unknown: 0, pending: 0 };
  const query = (conn.query as (...args: unknown[]) => unknown).bind(conn);
  rawQueryOf.set(conn, (config) => query(config) as Promise<QueryResult>);
  const counted = (...args: unknown[]): unknown => {
    // Rows held back go first, so that this statement sees them (they are their own works' writes, counted when held):
    // it is sent once they have answered.
    const held = sendDeferred(conn);
    if (held) {
      // Pending from now, as a statement sent at once would be.
      touches.pending++;
      const sent = held.then(() => {
        touches.pending--;
        return counted(...args);
      });
      if (typeof args[args.length - 1] !== 'function') return sent;
      // Callback style (knex): the callback gets the answer, and what query() returns is not used.
      void sent.catch(() => undefined);
      return undefined;
    }
    const sql = textOf(args[0]);
    if (sql === undefined || ENDS.test(sql)) {
      touches.unknown++;
      return query(...args);
    }
    const read = READ.test(sql);
    const answered = (err: unknown) => {
      touches.pending--;
      if (err) touches.unknown++;
      else if (!read) touches.writes++;
    };
    touches.pending++;
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: Error | null, result?: unknown) => {
        answered(err);
        (callback as Callback)(err, result);
      };
      return query(...args);
    }
    return (query(...args) as Promise<unknown>).then(
      (result) => {
        answered(null);
        return result;
      },
      (err: unknown) => {
        answered(err);
        throw err;
      },
    );
  };
  Object.assign(conn, { query: counted });
  touchesOf.set(conn, touches);
  return touches;
}

/** The error of a work that waited past db_statement_timeout for a lane (503, as a statement past its timeout). */
function waitedTooLong(statementMs: number): Error {
  return Object.assign(new Error(`The write waited more than ${statementMs} ms for the database`), {
    code: '57014',
  });
}

/**
 * Runs the grouped works (new documents' inserts) of one PostgreSQL database in batches, one transaction per batch and
 * no savepoints. A work that throws without having changed the transaction (a validation error, a hook that refuses
 * before the write) is answered with its error and the batch goes on. A work that throws after a write cannot be undone
 * alone: unless it is the batch's first, the batch is rolled back and each of its works, that one too, runs again in a
 * transaction of its own, so each is answered as it would be alone. So does a work during which a statement failed
 * (PostgreSQL then aborts the whole transaction), even the first: the statement may have been its own held row (a
 * duplicate name), whose error it never saw. A work that ran alone and lost a deadlock runs alone once more
 * (BatchLanes.retryDeadlocked). The batch commits when its lane finds no queued work at the turn's check phase, or
 * after GROUP_COMMIT_LINGER_TURNS turns that each brought some (or when it has run GROUP_COMMIT_MAX_WORKS); a work's
 * promise settles after that COMMIT, so its caller never answers for a write that is not durable. A failed COMMIT
 * rejects every work of the batch and closes the connection. A work may run twice, so it must do nothing outside the
 * transaction before its commit (DocumentTransaction.run starts each run afresh).
 */
export class PostgresGroupCommit extends BatchLanes {
  /** Batches committed (for tests). */
  commits = 0;

  constructor(
    private readonly knex: Knex,
    statementMs: number,
    maxLanes = GROUP_COMMIT_LANES,
  ) {
    super(statementMs, maxLanes, () => waitedTooLong(statementMs));
  }

  protected async batch(): Promise<void> {
    const client = this.knex.client as Knex.Client;
    let conn: PgConnection;
    try {
      conn = (await client.acquireConnection()) as PgConnection;
    } catch (err) {
      // No connection (pool timeout, server down): every work queued now would wait as long for the same answer.
      for (const queued of this.queue.drain()) queued.reject(err);
      return;
    }
    const connection = boundConnection(this.knex, conn);
    const touches = watchTouches(conn);
    const members: { queued: Queued; result: unknown }[] = [];
    let works = 0;
    /** False once the connection may be unusable: it is closed, not given back. */
    let usable = true;
    let begun = false;
    const turns = { lingered: 0 };
    try {
      while (works < GROUP_COMMIT_MAX_WORKS) {
        const queued = await this.nextWork(members.length, turns);
        if (!queued) break;
        works++;
        if (!begun) {
          try {
            await command(conn, 'BEGIN');
          } catch (err) {
            // The connection is gone: this work gets its error, the queued ones a lane of their own.
            usable = false;
            queued.reject(err);
            break;
          }
          begun = true;
        }
        if (queued.alone) deferredOf.delete(conn);
        else if (!deferredOf.has(conn)) deferredOf.set(conn, new Map());
        const writes = touches.writes;
        const unknown = touches.unknown;
        connection.active = true;
        let result: unknown;
        let failure: unknown;
        let failed = false;
        try {
          result = await queued.work(connection.knex);
        } catch (err) {
          failed = true;
          failure = err;
        }
        connection.active = false;
        const wrote = touches.writes !== writes;
        const unsure = touches.unknown !== unknown || touches.pending > 0;
        if (unsure && !queued.alone) {
          // A statement failed during it, its own or another's: a held row of its own, sent by its next statement,
          // fails there (a duplicate name) and aborts the transaction, so the work sees that statement's refusal
          // (25P02), not its own error; and the others' writes are gone. All run again alone, each answered as alone.
          usable = await this.rollback(conn);
          begun = false;
          this.again([...members.splice(0).map((member) => member.queued), queued]);
          break;
        } else if (!members.length) {
          // Alone in the transaction (run alone, or first of its batch and sure of its state): its outcome is the
          // one it would have alone.
          if (!failed) members.push({ queued, result });
          else {
            if (wrote || unsure) {
              usable = await this.rollback(conn);
              begun = false;
            }
            if (!this.retryDeadlocked(queued, isDeadlockError(failure, POSTGRES_ERRORS)))
              queued.reject(failure);
            if (!usable) break;
          }
        } else if (failed && wrote) {
          // Its writes cannot be undone without the others': all run again alone.
          usable = await this.rollback(conn);
          begun = false;
          this.again([...members.splice(0).map((member) => member.queued), queued]);
          break;
        } else if (failed) {
          // Nothing of it is in the transaction: it fails as it would alone, and the batch goes on.
          queued.reject(failure);
        } else members.push({ queued, result });
        if (queued.alone) break;
      }
      if (!begun) return;
      if (!members.length) {
        usable = await this.rollback(conn);
        return;
      }
      const held = sendDeferred(conn);
      if (held && !(await held)) {
        // A held row failed (a duplicate name): which work it belongs to is not known, so each runs again alone.
        usable = await this.rollback(conn);
        this.again(members.map((member) => member.queued));
        return;
      }
      let tag: string;
      try {
        tag = await command(conn, 'COMMIT');
      } catch (err) {
        // Whether the commit happened is unknown: the connection is not reused.
        usable = false;
        for (const member of members) member.queued.reject(err);
        return;
      }
      this.commits++;
      if (tag === 'ROLLBACK') {
        // A statement failed without any work seeing it (caught inside a work): nothing committed; each runs alone.
        if (members.length === 1) members[0]!.queued.reject(rolledBackError());
        else this.again(members.map((member) => member.queued));
        return;
      }
      for (const member of members) member.queued.resolve(member.result);
    } finally {
      connection.active = false;
      // Nothing is held back on the connection outside a batch (rows of a rolled-back batch are dropped).
      deferredOf.delete(conn);
      await releaseOrClose(client, conn, !usable);
    }
  }

  /** Rolls the open transaction back; resolves whether the connection answered. */
  private rollback(conn: PgConnection): Promise<boolean> {
    deferredOf.get(conn)?.clear();
    return command(conn, 'ROLLBACK').then(
      () => true,
      () => false,
    );
  }
}
