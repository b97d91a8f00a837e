// Group commit on MariaDB/MySQL: concurrent write transactions share one database transaction, committed once. A
// transaction of its own cost a create an INSERT, the change counter's bump and a COMMIT (three round trips, each a
// send, a MariaDB wake-up and a reply to parse, and a redo log flush per COMMIT); in a batch the bump and the COMMIT are
// paid once for all its works (table-changes.ts bumps each written table once per COMMIT), and the answers of a batch go
// out in the same turn. The works run one at a time on a connection of the write pool (whose sessions have autocommit
// off, so the first statement opens the transaction); a few such lanes run side by side, each taking the next queued
// work when it is free, so a batch is what queued up while the lane was busy, and what came in during the rest of the
// event-loop turn in which it ran out of works: one work when the service is quiet, many under load.
import type { Knex } from 'knex';
import { DEFAULT_TIMEOUTS } from '../backend';
import { BatchLanes, GROUP_COMMIT_LANES, GROUP_COMMIT_MAX_WORKS, type Queued } from '../batch-lanes';
import { isDeadlockError } from '../unavailable';
import { clearDeadline, deadlineError, setDeadline } from './deadline';
import { MYSQL_ERRORS } from './errors';
import { command, execute, statementCall, type MysqlConnection } from './statements';
import { boundConnection } from './transaction';

/** A work whose changes are in the open transaction, waiting for its commit. */
interface Member {
  queued: Queued;
  result: unknown;
}

/**
 * Errors after which InnoDB has undone the failed statement and nothing else: a duplicate key, a NULL or a value out of
 * range, too long or malformed, a missing or referenced foreign key. After any other failure (a deadlock ends the whole
 * transaction; a lock wait timeout, a lost connection, a statement timeout) what the transaction holds is unknown.
 */
const STATEMENT_ONLY_ERRNOS = new Set([
  1062, 1048, 1364, 1406, 1264, 1265, 1366, 1292, 1452, 1451, 1216, 1217,
]);

/** A read: it changes nothing in the transaction (a locking read takes locks, which a savepoint kept too). */
const READ = /^\s*(?:set\s+statement\s[^;]*?\bfor\s+)?\(?\s*(?:select|show|with|describe|explain)\b/i;
/** A statement that ends or begins a transaction (DDL commits implicitly): what the batch holds after it is unknown. */
const ENDS =
  /^\s*(?:commit|rollback(?!\s+to\b)|begin|start\s+transaction|set\s+autocommit|xa\s|lock\s|unlock\s|create|alter|drop|truncate|rename)\b/i;

/** What the statements sent on one write connection did to its transaction, counted as they answer. */
interface Touches {
  /** Statements other than reads that answered without an error. */
  writes: number;
  /** Statements after which the transaction's state is unknown: see STATEMENT_ONLY_ERRNOS and ENDS. */
  unknown: number;
  /** Statements sent and not answered yet. */
  pending: number;
}

const touchesOf = new WeakMap<MysqlConnection, Touches>();

type Callback = (err: (Error & { errno?: number }) | null, ...rest: unknown[]) => void;

/** Rows held back in an open batch, per INSERT head (`insert into t (...) values `): its row tuple and the rows' values. */
type Deferred = Map<string, { tuple: string; rows: unknown[][] }>;

/** The connections whose batch holds back its works' inserts (a work run again alone sends its own). */
const deferredOf = new WeakMap<MysqlConnection, Deferred>();

/**
 * Holds back the insert of one row (`head` + `tuple`, bound to `values`) when `conn` runs a batch of the group commit:
 * the rows of a table are sent as one INSERT just before the next statement on the connection, or before the COMMIT,
 * so that a batch's creates cost one round trip together instead of one each, and every statement still sees them.
 * False (nothing held) on any other connection: the caller sends the insert itself.
 */
export function deferInsert(conn: MysqlConnection, head: string, tuple: string, values: unknown[]): boolean {
  const deferred = deferredOf.get(conn);
  if (!deferred) return false;
  const table = deferred.get(head);
  if (table) table.rows.push(values);
  else deferred.set(head, { tuple, rows: [values] });
  // A held row is a write of its work: if the work fails, the batch's transaction holds it (see MysqlGroupCommit).
  (touchesOf.get(conn) as Touches).writes++;
  return true;
}

/** Placeholders per INSERT at most (MariaDB allows 65,535 per statement). */
const MAX_PLACEHOLDERS = 16_384;

/** Multi-row INSERT texts per head and number of rows. */
const insertTexts = new Map<string, string>();

function insertText(head: string, tuple: string, rows: number): string {
  const key = `${rows} ${head}`;
  let sql = insertTexts.get(key);
  if (sql === undefined) {
    sql = head + new Array<string>(rows).fill(tuple).join(', ');
    if (insertTexts.size < 4096) insertTexts.set(key, sql);
  }
  return sql;
}

/**
 * Sends the rows `conn` holds back (one INSERT per table, in the order the tables were first written, split to stay
 * under MAX_PLACEHOLDERS), through `send`; nothing when none is held.
 */
function sendDeferred(conn: MysqlConnection, send: (sql: string, values: unknown[]) => void): void {
  const deferred = deferredOf.get(conn);
  if (!deferred?.size) return;
  const tables = [...deferred];
  deferred.clear();
  for (const [head, { tuple, rows }] of tables) {
    const perStatement = Math.max(1, Math.floor(MAX_PLACEHOLDERS / Math.max(1, rows[0]!.length)));
    for (let start = 0; start < rows.length; start += perStatement) {
      const chunk = rows.slice(start, start + perStatement);
      send(insertText(head, tuple, chunk.length), chunk.flat());
    }
  }
}

/** The error a statement still queued on a connection gets when the connection is destroyed (503, as a lost one). */
function destroyedUnder(sql: unknown): Error {
  return Object.assign(
    new Error(`Connection lost: destroyed with the statement queued (${String(sql).slice(0, 60)})`),
    { code: 'PROTOCOL_CONNECTION_LOST', fatal: true },
  );
}

/**
 * Counts what the statements sent on `conn` did to its open transaction: wraps its `query` and `execute` once (above
 * the change counter's wrapper), so every statement is seen whatever sent it (row stores, knex, scripts). It also
 * bounds them: mysql2 starts a statement's own timeout only when the statement reaches the head of the connection's
 * queue, and a destroyed connection never answers the statements queued on it. So destroying the connection (a
 * statement past its timer: statements.ts `limited`, knex's timeout, or the held rows' own timer here, the one
 * statement sent without a timer of its caller) fails every statement still waiting on it: a statement queued behind
 * one the frozen server never answers is answered 503 within the deadline, not never. No timer per statement: those
 * with one of their own keep it.
 */
function watchTouches(conn: MysqlConnection, statementMs: number): Touches {
  const known = touchesOf.get(conn);
  if (known) return known;
  const touches: Touches = { writes: 0, unknown: 0, pending: 0 };
  const raw = conn as MysqlConnection & Record<'query' | 'execute', (...args: unknown[]) => unknown>;
  /** The statements sent and not answered: each one's failure, called by destroy (once, as the answer is). */
  const waiting = new Set<() => void>();
  const baseDestroy = conn.destroy.bind(conn);
  let destroyed = false;
  raw.destroy = () => {
    if (!destroyed) {
      destroyed = true;
      baseDestroy();
    }
    for (const fail of [...waiting]) fail();
  };
  /**
   * `callback`, called once: with the answer, or with an error when the connection is destroyed first; with `timed`,
   * the connection is destroyed if no answer comes within `statementMs` of now (the other statements have their own
   * timer: statements.ts `limited`, or knex's mysql2 timeout, whose expiry destroys the connection).
   */
  const bounded = (sql: unknown, callback: Callback, timed = false): Callback => {
    let done = false;
    const timer = timed ? setTimeout(() => raw.destroy(), statementMs) : undefined;
    timer?.unref();
    const fail = () => settle(destroyedUnder(sql));
    const settle: Callback = (err, ...rest) => {
      if (done) return;
      done = true;
      waiting.delete(fail);
      if (timer) clearTimeout(timer);
      callback(err, ...rest);
    };
    waiting.add(fail);
    return settle;
  };
  const baseExecute = raw.execute.bind(conn);
  const wrap =
    (original: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      const { sql, callback, last } = statementCall(args);
      // Rows held back go first, so that this statement sees them (they are their own works' writes, counted when
      // held); if they fail, the batch runs again alone.
      sendDeferred(conn, (insert, values) =>
        baseExecute(
          { sql: insert, values },
          bounded(
            insert,
            (err) => {
              if (err) touches.unknown++;
            },
            true,
          ),
        ),
      );
      if (typeof callback !== 'function' || typeof sql !== 'string' || ENDS.test(sql)) {
        touches.unknown++;
        if (typeof callback === 'function') args[last] = bounded(sql, callback as Callback);
        return original(...args);
      }
      const read = READ.test(sql);
      touches.pending++;
      args[last] = bounded(sql, (err: (Error & { errno?: number }) | null, ...rest: unknown[]) => {
        touches.pending--;
        if (err) {
          if (!STATEMENT_ONLY_ERRNOS.has(err.errno as number)) touches.unknown++;
        } else if (!read) touches.writes++;
        (callback as Callback)(err, ...rest);
      });
      return original(...args);
    };
  raw.query = wrap(raw.query.bind(conn));
  raw.execute = wrap(baseExecute);
  touchesOf.set(conn, touches);
  return touches;
}

/**
 * Runs the write works of one MariaDB database in batches on the write pool, one transaction per batch and no
 * savepoints: a create in a batch costs its own statements only (a SAVEPOINT per work was a round trip as dear as its
 * INSERT). A work that throws without having changed the transaction (a validation error, a hook that refuses before
 * the write, a duplicate key: InnoDB undoes the failed statement alone) is answered with its error and the batch goes
 * on. A work that throws after changing it (a hook that refuses after the insert), or during which a statement left the
 * transaction's state unknown (a deadlock ends the whole transaction), cannot be undone alone: the batch is rolled back
 * and each of its works, that one too, runs again in a transaction of its own, so each is answered as it would be alone
 * (the failing one fails again, the others commit; they pay a second run); one that ran alone and lost a deadlock runs
 * alone once more (BatchLanes.retryDeadlocked). The row store's inserts of new documents are held back in a batch
 * (deferInsert) and sent as one INSERT per table before the next statement or the COMMIT, so a batch of creates is that
 * INSERT, the change bump and the COMMIT; if that INSERT fails (a duplicate name), the batch is rolled back and its
 * works run again alone, and each answers as alone. The batch commits when its lane finds no queued work at the turn's
 * check phase, or after GROUP_COMMIT_LINGER_TURNS turns that each brought some (or when it has run
 * GROUP_COMMIT_MAX_WORKS); a work's promise settles after that COMMIT, so its caller never answers for a write that is
 * not durable. A failed COMMIT rejects every work of the batch and closes the connection. A batch that ends without
 * committing (its works all failed before writing: a read alone opens the transaction) is rolled back, so the pool
 * never hands out a connection holding a transaction and its old snapshot. A work may run twice, so it must do nothing
 * outside the transaction before its commit (DocumentTransaction.run starts each run afresh: its messages, after-commit
 * tasks and the document it saves). A work's wait for a lane, its statements and its batch's COMMIT share one deadline,
 * db_statement_timeout from its call: past it the work is answered 503 (PROTOCOL_SEQUENCE_TIMEOUT), whichever of them
 * it was waiting for.
 */
export class MysqlGroupCommit extends BatchLanes {
  /** `knex` is the write pool's (MysqlDatabase.writeKnex): its sessions run with autocommit off. */
  constructor(
    private readonly knex: Knex,
    statementMs = DEFAULT_TIMEOUTS.statementMs,
    maxLanes = GROUP_COMMIT_LANES,
  ) {
    super(statementMs, maxLanes, () => deadlineError(statementMs));
  }

  protected async batch(): Promise<void> {
    const client = this.knex.client as Knex.Client;
    let conn: MysqlConnection;
    try {
      conn = (await client.acquireConnection()) as MysqlConnection;
    } catch (err) {
      // No connection (pool timeout, server down): every work queued now would wait as long for the same answer.
      for (const queued of this.queue.drain()) queued.reject(err);
      return;
    }
    const connection = boundConnection(this.knex, conn);
    const touches = watchTouches(conn, this.statementMs);
    let members: Member[] = [];
    let works = 0;
    // False once the connection may be unusable: the batch ends and the lane takes a new one.
    let usable = true;
    // True from a work's start until a COMMIT or ROLLBACK: autocommit is off, so its first statement, a read too,
    // opened a transaction that nothing else ends.
    let open = false;
    /** Rolls the batch's transaction back (a connection that does not answer is closed: not usable). */
    const rollback = async () => {
      usable = await this.rollback(conn);
      open = false;
    };
    const turns = { lingered: 0 };
    try {
      while (usable && works < GROUP_COMMIT_MAX_WORKS) {
        const queued = await this.nextWork(members.length, turns);
        if (!queued) break;
        works++;
        open = true;
        setDeadline(conn, queued.at);
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
          // Its state is unknown (a held row of its own may have failed when a later statement sent it, and its
          // outcome then is not the one it would have alone), or the others' writes may be gone: all run again alone.
          await rollback();
          this.again([...members.map((member) => member.queued), queued]);
          members = [];
        } else if (!members.length) {
          // Alone in the transaction (run alone, or first of its batch and sure of its state): its outcome is the
          // one it would have alone.
          if (!failed) members.push({ queued, result });
          else {
            if (wrote || unsure) await rollback();
            if (!this.retryDeadlocked(queued, isDeadlockError(failure, MYSQL_ERRORS))) queued.reject(failure);
          }
        } else if (failed && wrote) {
          // Its writes cannot be undone without the others': all run again alone.
          await rollback();
          this.again([...members.map((member) => member.queued), queued]);
          members = [];
        } else if (failed) {
          // Nothing of it is in the transaction: it fails as it would alone, and the batch goes on.
          queued.reject(failure);
        } else members.push({ queued, result });
        if (queued.alone) break;
      }
      if (!members.length) return;
      // The held rows and the COMMIT answer every member: they end by the earliest member's deadline.
      setDeadline(conn, Math.min(...members.map((member) => member.queued.at)));
      if (usable && !(await this.sendHeld(conn))) {
        // A held row failed (a duplicate name): which work it belongs to is not known, so each runs again alone.
        await rollback();
        this.again(members.map((member) => member.queued));
        return;
      }
      try {
        await command(conn, 'COMMIT', this.statementMs);
        open = false;
      } catch (err) {
        // Whether the commit happened is unknown: the connection is not reused.
        conn.destroy();
        usable = false;
        for (const member of members) member.queued.reject(err);
        return;
      }
      for (const member of members) member.queued.resolve(member.result);
    } finally {
      // Works that all failed before writing (a Link check, a duplicate found by a read), or a batch left by a throw:
      // a transaction left open would keep its REPEATABLE READ snapshot on the idle connection, and the next work to
      // take it would check against that old snapshot. Never on a batch that committed.
      if (open && usable) await rollback();
      deferredOf.delete(conn);
      clearDeadline(conn);
      connection.active = false;
      await client.releaseConnection(conn);
    }
  }

  /** Sends the rows the batch holds back; resolves whether all of them were inserted. */
  private async sendHeld(conn: MysqlConnection): Promise<boolean> {
    const sent: Promise<unknown>[] = [];
    sendDeferred(conn, (sql, values) => sent.push(execute(conn, sql, values, this.statementMs)));
    return (await Promise.allSettled(sent)).every((outcome) => outcome.status === 'fulfilled');
  }

  /** Rolls the open transaction back; resolves whether the connection answered (one that did not is closed). */
  private rollback(conn: MysqlConnection): Promise<boolean> {
    deferredOf.get(conn)?.clear();
    return command(conn, 'ROLLBACK', this.statementMs).then(
      () => true,
      () => {
        conn.destroy();
        return false;
      },
    );
  }
}
