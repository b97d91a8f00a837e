// The scheduling shared by the group commits of MariaDB (mysql/group-commit.ts) and PostgreSQL (postgres/group-commit.ts):
// works queue with a deadline (db_statement_timeout from their call), and a few lanes, each a pooled connection running
// one batch at a time, take them in turn. A batch is what queued up while its lane was busy, and what came in during
// the rest of the event-loop turn in which it ran out of works: one work when the service is quiet, many under load.
// What a batch does with its works (its transaction, what a failure undoes) is the backend's.
import type { Knex } from 'knex';
import { DeadlineQueue, type Waiting } from './deadline-queue';

/** Connections with a batch open at once (each runs its works one at a time). */
export const GROUP_COMMIT_LANES = 2;
/** Turns a batch waits at most, before its commit, for works still coming in (see BatchLanes.nextWork). */
export const GROUP_COMMIT_LINGER_TURNS = 4;
/** Works per transaction at most: a longer batch would keep its first work's locks and answer waiting. */
export const GROUP_COMMIT_MAX_WORKS = 32;

/** A work waiting for a lane. */
export interface Queued extends Waiting {
  work: (q: Knex) => Promise<unknown>;
  resolve(result: unknown): void;
  /** Runs in a transaction of its own: its batch was rolled back and it runs again alone. */
  alone?: boolean;
  /** Ran alone and lost a deadlock once: it runs alone once more (BatchLanes.retryDeadlocked). */
  retried?: boolean;
}

/** Lanes taking queued works in batches; a backend's group commit says what a batch is (`batch`). */
export abstract class BatchLanes {
  /** Works waiting for a lane; one still waiting at its deadline is answered with the backend's late error. */
  protected readonly queue: DeadlineQueue<Queued>;
  private lanes = 0;
  /** Lanes waiting for the turn's check phase with a batch open: a work queued meanwhile joins one of them. */
  private lingering = 0;
  /** Works run again alone because their batch was rolled back (for tests). */
  reruns = 0;

  constructor(
    protected readonly statementMs: number,
    readonly maxLanes: number,
    late: () => Error,
  ) {
    this.queue = new DeadlineQueue(late);
  }

  /** Works waiting for a lane (for tests). */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Runs `work` in a batch; resolves with its result once the batch has committed, rejects with its error. Its wait for
   * a lane counts against its deadline, db_statement_timeout from now.
   */
  run<T>(work: (q: Knex) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work,
        resolve: resolve as (result: unknown) => void,
        reject,
        at: Date.now() + this.statementMs,
      });
      this.startLane();
    });
  }

  /** Runs one batch on a lane: takes works with nextWork, answers each of them. */
  protected abstract batch(): Promise<void>;

  /**
   * The next work of a batch that holds `members` works, or undefined when the batch should commit now. Requests read
   * in the same I/O phase reach the queue one socket callback after another: with nothing queued, a batch that holds
   * works waits for the turn's check phase (and more turns while each brings new works, GROUP_COMMIT_LINGER_TURNS at
   * most: `turns` counts them), so that they share its COMMIT. A work run again alone has a transaction of its own: a
   * batch holding works commits first.
   */
  protected async nextWork(members: number, turns: { lingered: number }): Promise<Queued | undefined> {
    for (;;) {
      if (!this.queue.length) {
        if (!members || turns.lingered++ >= GROUP_COMMIT_LINGER_TURNS) return undefined;
        this.lingering++;
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.lingering--;
        if (!this.queue.length) return undefined;
      }
      if (members && this.queue.peek()?.alone) return undefined;
      const queued = this.queue.shift() as Queued;
      // One past its deadline (its lane was stuck on a frozen server) is answered now; the next is taken.
      if (!this.queue.answeredLate(queued)) return queued;
    }
  }

  /** Queues the works of a rolled-back batch first, each to run again in a transaction of its own. */
  protected again(works: Queued[]): void {
    for (const work of works) work.alone = true;
    this.queue.unshift(works);
    this.reruns += works.length;
    for (let i = 0; i < works.length; i++) this.startLane();
  }

  /**
   * Queues `work`, which failed alone, to run alone once more when `deadlocked` (the server rolled its transaction back
   * to break a deadlock with another lane's batch: run again, it may well succeed) and it has not already been; false
   * otherwise, and its caller answers it with its error.
   */
  protected retryDeadlocked(work: Queued, deadlocked: boolean): boolean {
    if (!deadlocked || work.retried) return false;
    work.retried = true;
    this.again([work]);
    return true;
  }

  private startLane(): void {
    if (this.lanes < this.maxLanes && !this.lingering) {
      this.lanes++;
      void this.lane();
    }
  }

  /** Runs batches while works are queued. */
  private async lane(): Promise<void> {
    try {
      while (this.queue.length) await this.batch();
    } finally {
      this.lanes--;
    }
  }
}
