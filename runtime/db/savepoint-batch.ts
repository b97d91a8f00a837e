// A batch of write works in one transaction, each in a savepoint of its own: what a bulk request's items share on MariaDB
// and PostgreSQL (on SQLite the group commit does the same for every write of a turn, sqlite/group-commit.ts). An item that throws is
// rolled back to its savepoint alone; the others commit together, once, when the batch is closed and its last work has
// ended. A work's promise settles after that commit, so nothing is reported done before it is durable.
import type { Knex } from 'knex';
import type { ClosableWriteBatch, DriverErrors } from './backend';
import { isDeadlockError } from './unavailable';
import { BatchRolledBackError } from './write-transaction';

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
  private trx: Knex.Transaction | undefined;
  private members: Member[] = [];
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;
  private ended = false;

  /** `errors`: the driver's, which tell a deadlock's victim. */
  constructor(
    private readonly knex: Knex,
    private readonly errors: DriverErrors,
  ) {}

  run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    if (this.ended) return this.knex.transaction((trx) => work(trx));
    this.pending++;
    return new Promise<T>((resolve, reject) => {
      this.queue = this.queue.then(async () => {
        try {
          const result = await this.inSavepoint(work);
          this.members.push({ resolve: () => resolve(result), reject });
        } catch (err) {
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
    const trx = this.trx ?? (this.trx = await this.knex.transaction());
    // No RELEASE after a work: the next SAVEPOINT of the same name replaces this one (MariaDB and MySQL; PostgreSQL
    // stacks it, and ROLLBACK TO names the newest), and the commit ends it; one round trip per item fewer.
    await trx.raw('SAVEPOINT svc_item');
    try {
      return await work(trx);
    } catch (err) {
      if (isDeadlockError(err, this.errors)) {
        await this.end(trx, new BatchRolledBackError(err));
        throw err;
      }
      try {
        await trx.raw('ROLLBACK TO SAVEPOINT svc_item');
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
    try {
      await trx.commit();
    } catch (err) {
      await this.end(trx, err);
      return;
    }
    this.settle(undefined);
  }

  /** Ends a transaction that failed: rolled back (what is left of it), its members told. */
  private async end(trx: Knex.Transaction, failure: unknown): Promise<void> {
    if (this.trx === trx) this.trx = undefined;
    await trx.rollback().catch(() => undefined);
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
