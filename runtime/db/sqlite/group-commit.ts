// Group commit on SQLite: the write transactions of one event-loop turn share one database transaction, each in a
// savepoint of its own, committed once in the turn's check phase. A commit (BEGIN IMMEDIATE ... COMMIT) takes WAL locks
// and writes every changed page as a frame; alone it cost more than the insert it wrapped (~40 of a create's ~110 us
// under load). Forty creates read in one poll now pay for one commit, and rows they share a page with are written once.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import { heldConnectionKnex } from '../held-connection';
import { acquireBy } from '../acquire-by';
import { DeadlineQueue, type Waiting } from '../deadline-queue';
import { BatchRolledBackError } from '../write-transaction';
import { lockWaitError, untilLocked } from './lock-wait';
import { prepared } from './statements';

/** What the read snapshots need to know of a connection's group commits. */
export interface BatchClock {
  /** A batch is open on the connection: its transaction is the group commit's, whose works are not answered yet. */
  inBatch: boolean;
  /** Batches ended (committed or rolled back) on the connection so far. */
  batchesEnded: number;
}

/** The knex bound to one SQLite connection, its prepared transaction statements and its batch clock. */
interface BoundConnection extends BatchClock {
  conn: BetterSqlite3.Database;
  knex: Knex;
  begin: BetterSqlite3.Statement;
  commit: BetterSqlite3.Statement;
  rollback: BetterSqlite3.Statement;
  savepoint: BetterSqlite3.Statement;
  release: BetterSqlite3.Statement;
  rollbackToSavepoint: BetterSqlite3.Statement;
  /** True while a work runs: queries of its knex are refused at any other time. */
  active: boolean;
  /** Rows held back in the open batch (deferRow), inserted just before its COMMIT. */
  deferred: DeferredRow[];
}

/** A row held back in a batch: its INSERT's head (`insert into t (...) values `), row tuple and values. */
interface DeferredRow {
  head: string;
  tuple: string;
  values: unknown[];
}

const bound = new WeakMap<BetterSqlite3.Database, BoundConnection>();

/** The bound connections by their knex (what a work is given as its transaction). */
const byKnex = new WeakMap<Knex, BoundConnection>();

/**
 * Holds back the insert of one row that no statement of the batch reads (the event log's), when `trx` is a work's
 * transaction in a batch: the batch's held rows go in as one INSERT per table and chunk just before its COMMIT, instead
 * of one statement per row; a work rolled back to its savepoint drops its own. False on any other knex: the caller
 * inserts the row itself.
 */
export function deferRow(trx: Knex, head: string, tuple: string, values: unknown[]): boolean {
  const held = byKnex.get(trx);
  if (!held?.active) return false;
  held.deferred.push({ head, tuple, values });
  return true;
}

/** Rows per INSERT of held rows at most (a statement per row count up to it is prepared once per connection). */
const DEFERRED_ROWS_PER_INSERT = 32;

/** Inserts the rows held back on `connection`, in the order held, one INSERT per table and chunk. */
function insertDeferred(connection: BoundConnection): void {
  const rows = connection.deferred;
  if (rows.length === 0) return;
  connection.deferred = [];
  const byHead = new Map<string, DeferredRow[]>();
  for (const row of rows) {
    const same = byHead.get(row.head);
    if (same) same.push(row);
    else byHead.set(row.head, [row]);
  }
  for (const [head, same] of byHead) {
    const tuple = (same[0] as DeferredRow).tuple;
    for (let start = 0; start < same.length; start += DEFERRED_ROWS_PER_INSERT) {
      const chunk = same.slice(start, start + DEFERRED_ROWS_PER_INSERT);
      const sql = head + new Array<string>(chunk.length).fill(tuple).join(', ');
      prepared(connection.conn, sql).run(chunk.flatMap((row) => row.values));
    }
  }
}

/** The group-commit clock of `conn` (undefined before its first batch). */
export function batchClock(conn: BetterSqlite3.Database): BatchClock | undefined {
  return bound.get(conn);
}

/** Built once per connection: a knex whose queries run on `conn` while a work holds it, and are refused otherwise. */
function boundConnection(knex: Knex, conn: BetterSqlite3.Database): BoundConnection {
  const known = bound.get(conn);
  if (known) return known;
  const state = { active: false, inBatch: false, batchesEnded: 0, deferred: [] as DeferredRow[] };
  const { useNullAsDefault } = knex.client.config as Knex.Config;
  const made: BoundConnection = Object.assign(state, {
    conn,
    knex: heldConnectionKnex(knex.client.constructor as typeof Knex.Client, conn, state, {
      useNullAsDefault: useNullAsDefault ?? true,
    }),
    begin: conn.prepare('BEGIN IMMEDIATE'),
    commit: conn.prepare('COMMIT'),
    rollback: conn.prepare('ROLLBACK'),
    savepoint: conn.prepare('SAVEPOINT svc_work'),
    release: conn.prepare('RELEASE svc_work'),
    rollbackToSavepoint: conn.prepare('ROLLBACK TO svc_work'),
  });
  bound.set(conn, made);
  byKnex.set(made.knex, made);
  return made;
}

/** A work waiting for the connection while another runs; its deadline is db_busy_timeout after it was asked for. */
interface Waiter extends Waiting {
  resume(): void;
}

/** A work whose changes are released into the open batch and that waits for its commit. */
interface Member {
  resolve(): void;
  reject(err: unknown): void;
}

/** The database transaction of the current batch. */
interface Batch {
  connection: BoundConnection;
  members: Member[];
  /** The check phase of the turn it opened in has come: commit as soon as no work runs. */
  due: boolean;
}

/**
 * Runs the write works of one SQLite database one at a time on knex's single pooled connection. The first work of a
 * turn opens the batch (BEGIN IMMEDIATE); each work runs inside SAVEPOINT svc_work and is rolled back to it alone when it
 * throws; the batch commits in the check phase of the turn it opened in, or when the work running then ends (a work
 * that awaits real I/O delays the commit, as it held the connection before). A work's promise settles after the
 * commit: its caller never answers for a write that is not durable, and every read it makes afterwards sees it.
 * Behind another process's write lock, a work waits at most db_busy_timeout from its call, whether it waits for the
 * lock itself (BEGIN IMMEDIATE, tried again on a timer: lock-wait.ts) or for the work ahead of it; then it fails with
 * SQLITE_BUSY (503). The event loop stays free meanwhile.
 */
export class GroupCommit {
  private busy = false;
  /** Works waiting for the connection: one still waiting at its deadline fails (the work ahead waits for the lock). */
  private readonly waiting: DeadlineQueue<Waiter>;
  private batch: Batch | undefined;

  /** `busyMs`: db_busy_timeout, the longest a work waits for the write lock and for the works ahead of it. */
  constructor(
    private readonly knex: Knex,
    private readonly busyMs: number,
  ) {
    this.waiting = new DeadlineQueue(() => lockWaitError(busyMs));
  }

  /** Runs `work` in the current batch; resolves with its result once the batch is committed, rejects with its error. */
  async run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    const at = Date.now() + this.busyMs;
    if (this.busy) {
      await new Promise<void>((resume, reject) => this.waiting.push({ resume, reject, at }));
    } else this.busy = true;
    let batch: Batch;
    let result: T;
    try {
      batch = this.batch ?? (await this.open(at));
      result = await this.inSavepoint(batch, work);
    } catch (err) {
      this.next();
      throw err;
    }
    const committed = new Promise<void>((resolve, reject) => batch.members.push({ resolve, reject }));
    this.next();
    await committed;
    return result;
  }

  /**
   * Opens a batch: BEGIN IMMEDIATE on knex's connection, tried again until `at` while another process holds the lock
   * (the connection goes back to the pool between two attempts, for the site knex's reads).
   */
  private async open(at: number): Promise<Batch> {
    const client = this.knex.client as Knex.Client;
    const connection = await untilLocked(at, async () => {
      const conn = await acquireBy(
        client.acquireConnection() as Promise<BetterSqlite3.Database>,
        at,
        () => lockWaitError(this.busyMs),
        (late) => client.releaseConnection(late),
      );
      const bound = boundConnection(this.knex, conn);
      try {
        bound.begin.run();
      } catch (err) {
        await client.releaseConnection(conn);
        throw err;
      }
      return bound;
    });
    const batch: Batch = { connection, members: [], due: false };
    this.batch = batch;
    connection.inBatch = true;
    setImmediate(() => {
      batch.due = true;
      if (!this.busy && this.batch === batch) this.commit(batch);
    });
    return batch;
  }

  private async inSavepoint<T>(batch: Batch, work: (q: Knex) => Promise<T>): Promise<T> {
    const connection = batch.connection;
    connection.savepoint.run();
    connection.active = true;
    const held = connection.deferred.length;
    try {
      const result = await work(connection.knex);
      connection.active = false;
      connection.release.run();
      return result;
    } catch (err) {
      connection.active = false;
      connection.deferred.length = held;
      if (connection.conn.inTransaction) {
        connection.rollbackToSavepoint.run();
        connection.release.run();
      } else {
        // SQLite ended the whole transaction (I/O error, disk full): the works released into it are lost too.
        this.end(batch, new BatchRolledBackError(err));
      }
      throw err;
    }
  }

  /** The work that ran is done: commits the batch when it is due, then gives the connection to the next work. */
  private next(): void {
    const batch = this.batch;
    if (batch?.due) this.commit(batch);
    const waiter = this.waiting.shift();
    if (waiter) waiter.resume();
    else this.busy = false;
  }

  private commit(batch: Batch): void {
    let failure: unknown;
    try {
      insertDeferred(batch.connection);
      batch.connection.commit.run();
    } catch (err) {
      failure = err;
      try {
        if (batch.connection.conn.inTransaction) batch.connection.rollback.run();
      } catch {
        // The connection is broken; the members still learn of the failure.
      }
    }
    this.end(batch, failure);
  }

  /** Ends the batch: its members learn the outcome and the connection goes back to the pool. */
  private end(batch: Batch, failure: unknown): void {
    if (this.batch === batch) this.batch = undefined;
    batch.connection.inBatch = false;
    batch.connection.deferred = [];
    batch.connection.batchesEnded++;
    const members = batch.members;
    batch.members = [];
    void (this.knex.client as Knex.Client).releaseConnection(batch.connection.conn);
    for (const member of members) {
      if (failure === undefined) member.resolve();
      else member.reject(failure);
    }
  }
}
