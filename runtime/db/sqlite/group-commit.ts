// Group commit on SQLite: the write transactions of one event-loop turn share one database transaction, each in a
// savepoint of its own, committed once in the turn's check phase. A commit (BEGIN IMMEDIATE ... COMMIT) takes WAL locks
// and writes every changed page as a frame; alone it cost more than the insert it wrapped (~40 of a create's ~110 us
// under load). Forty creates read in one poll now pay for one commit, and rows they share a page with are written once.
import type BetterSqlite3 from 'better-sqlite3';
import knexFactory, { type Knex } from 'knex';
import { BatchRolledBackError } from '../write-transaction';

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
}

const bound = new WeakMap<BetterSqlite3.Database, BoundConnection>();

/** The bound connections by their knex (what a work is given as its transaction). */
const byKnex = new WeakMap<Knex, BoundConnection>();

/**
 * The connection of the write transaction `trx` while its work runs, found without a turn of the event loop (knex's
 * acquireConnection answers with a promise); undefined for any other knex (a nested knex transaction, the site's).
 */
export function heldConnection(trx: Knex): BetterSqlite3.Database | undefined {
  const held = byKnex.get(trx);
  return held?.active ? held.conn : undefined;
}

/** The group-commit clock of `conn` (undefined before its first batch). */
export function batchClock(conn: BetterSqlite3.Database): BatchClock | undefined {
  return bound.get(conn);
}

/** Built once per connection: a knex whose queries run on `conn` while a work holds it, and are refused otherwise. */
function boundConnection(knex: Knex, conn: BetterSqlite3.Database): BoundConnection {
  const known = bound.get(conn);
  if (known) return known;
  const state = { active: false, inBatch: false, batchesEnded: 0 };
  const Base = knex.client.constructor as typeof Knex.Client;
  class HeldConnectionClient extends Base {
    // Nested knex transactions (trx.transaction(...)) become savepoints, as inside a knex transaction.
    transacting = true;

    override acquireConnection(): Promise<BetterSqlite3.Database> {
      // A query left running after its work ended must not land in another work's savepoint.
      if (!state.active) return Promise.reject(new Error('Transaction query already complete'));
      return Promise.resolve(conn);
    }

    override releaseConnection(): Promise<void> {
      return Promise.resolve();
    }
  }
  const { useNullAsDefault } = knex.client.config as Knex.Config;
  const made: BoundConnection = Object.assign(state, {
    conn,
    knex: knexFactory({ client: HeldConnectionClient, useNullAsDefault: useNullAsDefault ?? true }),
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
 */
export class GroupCommit {
  private busy = false;
  private readonly waiting: (() => void)[] = [];
  private batch: Batch | undefined;

  constructor(private readonly knex: Knex) {}

  /** Runs `work` in the current batch; resolves with its result once the batch is committed, rejects with its error. */
  async run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resume) => this.waiting.push(resume));
    else this.busy = true;
    let batch: Batch;
    let result: T;
    try {
      batch = this.batch ?? (await this.open());
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

  private async open(): Promise<Batch> {
    const client = this.knex.client as Knex.Client;
    const conn = (await client.acquireConnection()) as BetterSqlite3.Database;
    const connection = boundConnection(this.knex, conn);
    try {
      connection.begin.run();
    } catch (err) {
      await client.releaseConnection(conn);
      throw err;
    }
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
    try {
      const result = await work(connection.knex);
      connection.active = false;
      connection.release.run();
      return result;
    } catch (err) {
      connection.active = false;
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
    const resume = this.waiting.shift();
    if (resume) resume();
    else this.busy = false;
  }

  private commit(batch: Batch): void {
    let failure: unknown;
    try {
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
