// A batch of write works in one transaction, each in a savepoint of its own: what a bulk request's items share on MariaDB
// and PostgreSQL (on SQLite the group commit does the same for every write of a turn, sqlite/group-commit.ts). An item that throws is
// rolled back to its savepoint alone; the others commit together, once, when the batch is closed and its last work has
// ended. A work's promise settles after that commit, so nothing is reported done before it is durable. The transaction
// is the backend's own write transaction (Database.transaction), held open for the batch: its wait for a connection
// and its statements keep the backend's time limits, so a frozen server answers a bulk request 503 instead of holding
// it. Once a work finds the database down, the works after it fail at once with the same error.
import type { Knex } from 'knex';
import type { ClosableWriteBatch, DriverErrors } from './backend';
import { isDeadlockError, isOutageError } from './unavailable';
import { BatchRolledBackError } from './write-transaction';

/** A backend's write transaction: `work` committed when it resolves, rolled back when it throws. */
export type Transact = <T>(work: (q: Knex) => Promise<T>) => Promise<T>;

/** A write transaction held open: its knex, and its end. */
interface HeldTransaction {
  q: Knex;
  /** COMMIT; rejects when it failed. */
  commit(): Promise<void>;
  /** ROLLBACK (never rejects). */
  rollback(): Promise<void>;
}

/** Thrown into a held transaction's work to roll it back. */
const ROLL_BACK = new Error('rolled back');

/** Opens a transaction through `transact` and holds it open until its commit or rollback. */
function holdTransaction(transact: Transact): Promise<HeldTransaction> {
  return new Promise<HeldTransaction>((opened, failed) => {
    const ended = transact(
      (q) =>
        new Promise<void>((commit, rollBack) =>
          opened({
            q,
            commit: () => {
              commit();
              return ended;
            },
            rollback: () => {
              rollBack(ROLL_BACK);
              return ended.catch(() => undefined);
            },
          }),
        ),
    );
    // Before it opened (no connection, BEGIN unanswered): the batch's error. After, commit and rollback report it.
    ended.catch(failed);
  });
}

/** A work released into the open transaction, waiting for its commit. */
interface Member {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Runs works one at a time, in the order `run` is called, on one knex transaction. The transaction opens with the
 * first work and commits when `close()` has been called and no work is queued or running. If the server ends the
 * transaction under a work (a deadlock rolls back the whole transaction), the works released into it reject with
 * BatchRolledBackError and the works still queued continue in a new transaction. A work that loses a deadlock ends the
 * transaction so too where the server undid only its statement (PostgreSQL): rolled back to its savepoint, the batch
 * would keep the locks the other transaction waits for, and its next items would lose to it again, a deadlock_timeout
 * each. A work arriving after the commit runs in a transaction of its own.
 */
export class SavepointBatch implements ClosableWriteBatch {
  private trx: HeldTransaction | undefined;
  private members: Member[] = [];
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;
  private ended = false;
  /** The error of a work that found the database down: the works after it fail with it. */
  private down: unknown;

  /**
   * `transact`: the backend's write transaction; `errors`: the driver's, which tell a deadlock's victim and an outage;
   * `renew` gives the held transaction a new deadline before each work, where the backend's runs from its start.
   */
  constructor(
    private readonly transact: Transact,
    private readonly errors: DriverErrors,
    private readonly renew?: (q: Knex) => void,
  ) {}

  run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    if (this.down !== undefined) return Promise.reject(this.down);
    if (this.ended) return this.transact(work);
    this.pending++;
    return new Promise<T>((resolve, reject) => {
      this.queue = this.queue.then(async () => {
        try {
          if (this.down !== undefined) throw this.down;
          const result = await this.inSavepoint(work);
          this.members.push({ resolve: () => resolve(result), reject });
        } catch (err) {
          if (this.down === undefined && isOutageError(err, this.errors)) this.down = err;
          reject(err);
        }
        this.pending--;
        await this.commitWhenDone();
      });
    });
  }

  /** No more works will be started for this batch: it commits once the queued ones have run. */
  close(): Promise<void> {
    this.closed = true;
    this.queue = this.queue.then(() => this.commitWhenDone());
    return this.queue;
  }

  private async inSavepoint<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    const trx = this.trx ?? (this.trx = await holdTransaction(this.transact));
    this.renew?.(trx.q);
    // No RELEASE after a work: the next SAVEPOINT of the same name replaces this one (MariaDB and MySQL; PostgreSQL
    // stacks it, and ROLLBACK TO names the newest), and the commit ends it; one round trip per item fewer.
    await trx.q.raw('SAVEPOINT svc_item');
    try {
      return await work(trx.q);
    } catch (err) {
      if (isDeadlockError(err, this.errors) || isOutageError(err, this.errors)) {
        await this.end(trx, new BatchRolledBackError(err));
        throw err;
      }
      try {
        await trx.q.raw('ROLLBACK TO SAVEPOINT svc_item');
      } catch {
        // The server ended the transaction (its savepoint is gone): the works released into it are lost too.
        await this.end(trx, new BatchRolledBackError(err));
      }
      throw err;
    }
  }

  private async commitWhenDone(): Promise<void> {
    if (!this.closed || this.pending > 0 || this.ended) return;
    this.ended = true;
    const trx = this.trx;
    if (!trx) return;
    this.trx = undefined;
    try {
      await trx.commit();
    } catch (err) {
      this.settle(err);
      return;
    }
    this.settle(undefined);
  }

  /** Ends a transaction that failed: rolled back (what is left of it), its members told. */
  private async end(trx: HeldTransaction, failure: unknown): Promise<void> {
    if (this.trx === trx) this.trx = undefined;
    await trx.rollback();
    this.settle(failure);
  }

  private settle(failure: unknown): void {
    const members = this.members;
    this.members = [];
    for (const member of members) {
      if (failure === undefined) member.resolve();
      else member.reject(failure);
    }
  }
}
