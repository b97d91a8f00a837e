// Group commit on MariaDB/MySQL: concurrent write transactions share one database transaction, each in a savepoint of its
// own, committed once. A transaction of its own cost a create an INSERT, the change counter's bump and a COMMIT (three
// round trips, each a send, a MariaDB wake-up and a reply to parse, and a redo log flush per COMMIT); in a batch the
// bump and the COMMIT are paid once for all its works (table-changes.ts bumps each written table once per COMMIT), and
// the answers of a batch go out in the same turn. The works run one at a time on a connection of the write pool (whose
// sessions have autocommit off, so the first statement opens the transaction); a few such lanes run side by side, each
// taking the next queued work when it is free, so a batch is what queued up while the lane was busy: one work when
// the service is quiet, many under load.
import type { Knex } from 'knex';
import { DEFAULT_TIMEOUTS } from './connect';
import { BatchRolledBackError } from './group-commit';
import { command, type MysqlConnection } from './mysql-statements';
import { boundConnection } from './mysql-transaction';

/** Connections with a batch open at once (each runs its works one at a time). */
export const GROUP_COMMIT_LANES = 4;
/** Works per transaction at most: a longer batch would keep its first work's locks and answer waiting. */
export const GROUP_COMMIT_MAX_WORKS = 32;

/** A work waiting for a lane. */
interface Queued {
  work: (q: Knex) => Promise<unknown>;
  resolve(result: unknown): void;
  reject(err: unknown): void;
}

/** A work whose changes are released into the open transaction, waiting for its commit. */
interface Member {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Runs the write works of one MariaDB database in batches on the write pool. The first work of a batch runs without a
 * savepoint (if it throws, ROLLBACK ends the transaction, which holds nothing else); each later one runs inside
 * SAVEPOINT svc_work and is rolled back to it alone when it throws. The batch commits when its lane finds no queued work
 * (or has run GROUP_COMMIT_MAX_WORKS); a work's promise settles after that COMMIT, so its caller never answers for a
 * write that is not durable. If the server ends the transaction under a work (a deadlock rolls back the whole InnoDB
 * transaction; the savepoint is gone), the works released into it reject with BatchRolledBackError and the lane goes
 * on with a fresh transaction. A failed COMMIT rejects every work of the batch and closes the connection.
 */
export class MysqlGroupCommit {
  private readonly queue: Queued[] = [];
  private lanes = 0;
  private readonly statementMs: number;

  /** `knex` is the write pool's (Database.writeKnex): its sessions run with autocommit off. */
  constructor(
    private readonly knex: Knex,
    statementMs = DEFAULT_TIMEOUTS.statementMs,
    private readonly maxLanes = GROUP_COMMIT_LANES,
  ) {
    this.statementMs = statementMs;
  }

  /** Runs `work` in a batch; resolves with its result once the batch has committed, rejects with its error. */
  run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (result: unknown) => void, reject });
      if (this.lanes < this.maxLanes) {
        this.lanes++;
        void this.lane();
      }
    });
  }

  /** Runs batches while works are queued. */
  private async lane(): Promise<void> {
    try {
      while (this.queue.length) await this.batch();
    } finally {
      this.lanes--;
    }
  }

  private async batch(): Promise<void> {
    const client = this.knex.client as Knex.Client;
    let conn: MysqlConnection;
    try {
      conn = (await client.acquireConnection()) as MysqlConnection;
    } catch (err) {
      // No connection (pool timeout, server down): every work queued now would wait as long for the same answer.
      for (const queued of this.queue.splice(0)) queued.reject(err);
      return;
    }
    const connection = boundConnection(this.knex, conn, this.statementMs);
    let members: Member[] = [];
    let works = 0;
    // False once the connection may be unusable: the batch ends and the lane takes a new one.
    let usable = true;
    try {
      while (usable && this.queue.length && works < GROUP_COMMIT_MAX_WORKS) {
        const queued = this.queue.shift() as Queued;
        works++;
        const alone = members.length === 0;
        // The savepoint is sent, not awaited: mysql2 runs a connection's commands in order, so it is taken before the
        // work's first statement while the work's own code runs. If it failed, the work's statements are not
        // isolated from the others': the whole transaction is given up below.
        let savepointFailure: unknown;
        const savepoint = alone
          ? undefined
          : command(conn, 'SAVEPOINT svc_work', this.statementMs).catch((err: unknown) => {
              savepointFailure = err ?? new Error('SAVEPOINT failed');
            });
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
        if (savepoint) await savepoint;
        if (savepointFailure !== undefined) {
          queued.reject(failed ? failure : savepointFailure);
          usable = await this.abandon(conn, members, new BatchRolledBackError(savepointFailure));
          members = [];
          continue;
        }
        if (failed) {
          if (alone) {
            // Nothing else is in the transaction: ROLLBACK ends it (a connection that cannot is closed).
            await command(conn, 'ROLLBACK', this.statementMs).catch(() => {
              conn.destroy();
              usable = false;
            });
          } else {
            try {
              await command(conn, 'ROLLBACK TO SAVEPOINT svc_work', this.statementMs);
            } catch {
              // The server ended the whole transaction (deadlock, lost connection): the works released into it
              // are lost too.
              usable = await this.abandon(conn, members, new BatchRolledBackError(failure));
              members = [];
            }
          }
          queued.reject(failure);
          continue;
        }
        members.push({ resolve: () => queued.resolve(result), reject: queued.reject });
      }
      if (!members.length) return;
      try {
        await command(conn, 'COMMIT', this.statementMs);
      } catch (err) {
        // Whether the commit happened is unknown: the connection is not reused.
        conn.destroy();
        settle(members, err);
        return;
      }
      settle(members, undefined);
    } finally {
      connection.active = false;
      await client.releaseConnection(conn);
    }
  }

  /**
   * Ends a transaction the server may have ended already: what is left of it is rolled back and its works are told
   * `failure`. Resolves whether the connection answered (clean, usable for the next works); one that did not is closed.
   */
  private async abandon(
    conn: MysqlConnection,
    members: readonly Member[],
    failure: unknown,
  ): Promise<boolean> {
    const clean = await command(conn, 'ROLLBACK', this.statementMs).then(
      () => true,
      () => {
        conn.destroy();
        return false;
      },
    );
    settle(members, failure);
    return clean;
  }
}

function settle(members: readonly Member[], failure: unknown): void {
  for (const member of members) {
    if (failure === undefined) member.resolve();
    else member.reject(failure);
  }
}
