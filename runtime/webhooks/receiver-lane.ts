// The attempts to one receiver (host and port) in this process: one lane, PARALLEL attempts at a time, however many
// delivery jobs have rows for it. The job that opens a lane runs it, and keeps its worker place, until the lane is
// empty; a job whose rows find the receiver's lane open hands them over and ends at once. So a receiver that hangs until
// its timeout holds one `job_concurrency` place per process, not every place its jobs reach: the other receivers'
// deliveries, and the other background jobs, keep their workers. A lane records its finished attempts whenever none of
// its writes is in flight (those that finish meanwhile go in the next), each through the run that read the row, so a
// row answered at once is recorded at once, not when the lane's slowest attempt ends.
import type { DocData } from '../db/row-store';
import { SitePlugin, type Site } from '../site';

/** Attempts a lane runs at once. */
export const PARALLEL = 8;

/** What a delivery run does with a row of a lane: send it, and record attempts that have finished. */
export interface LaneRun<A> {
  send(row: DocData): Promise<A>;
  /** Records finished attempts in one write; a failure ends the lane. */
  recordAll(finished: A[]): Promise<void>;
}

/** A row waiting in a lane, with the run that read it. */
interface LaneWork<A> {
  row: DocData;
  run: LaneRun<A>;
}

/** One receiver's lane; see the file comment. */
class ReceiverLane<A> {
  private readonly pending: LaneWork<A>[] = [];
  private readonly finished: { run: LaneRun<A>; attempted: A }[] = [];
  private sending = 0;
  /** No attempt starts any more, and no row joins: the senders have ended, or a write or a send failed. */
  private closed = false;
  private failed = false;
  /** The first error of a send (a bug: a send answers every fault of the receiver's as an outcome). */
  private sendError: unknown;
  private unstarted: DocData[] = [];
  private wakeRecorder: () => void = () => undefined;
  /** The rows the lane did not start (given back by its owner); rejects when a write or a send failed. */
  readonly done: Promise<DocData[]>;

  /** `mayStart` is the owner's: false once its run's time is up or its worker stops. `onClose` forgets the lane. */
  constructor(
    private readonly mayStart: () => boolean,
    private readonly onClose: () => void,
  ) {
    this.done = this.recorder().then(
      () => this.unstarted,
      (err: unknown) => {
        this.failed = true;
        this.close();
        throw err;
      },
    );
  }

  /** Adds rows, unless the lane starts no more attempts (then the caller opens a lane of its own); says whether it did. */
  join(rows: readonly DocData[], run: LaneRun<A>): boolean {
    if (this.closed || this.failed || !this.mayStart()) return false;
    this.add(rows, run);
    return true;
  }

  /** Adds rows and starts senders for them, up to PARALLEL (one that may not start ends; the last closes the lane). */
  add(rows: readonly DocData[], run: LaneRun<A>): void {
    for (const row of rows) this.pending.push({ row, run });
    const room = Math.min(PARALLEL - this.sending, this.pending.length);
    for (let i = 0; i < room; i++) {
      this.sending++;
      void this.sender();
    }
  }

  private async sender(): Promise<void> {
    try {
      while (this.pending.length && !this.failed && this.mayStart()) {
        const work = this.pending.shift() as LaneWork<A>;
        const attempted = await work.run.send(work.row);
        this.finished.push({ run: work.run, attempted });
        this.wakeRecorder();
      }
    } catch (err) {
      // Ends the lane as a failed write does: its end rejects (no sender's promise is left unhandled).
      this.failed = true;
      this.sendError ??= err;
    } finally {
      this.sending--;
      if (this.sending === 0) this.close();
    }
  }

  /** Ends the lane: rows not started are kept for the owner to give back, and no row joins any more. */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unstarted = this.pending.splice(0).map((work) => work.row);
    this.onClose();
    this.wakeRecorder();
  }

  /** Records finished attempts, grouped by the run that read them, until the senders have ended and all is recorded. */
  private async recorder(): Promise<void> {
    while (!this.closed || this.finished.length) {
      if (!this.finished.length) {
        await new Promise<void>((resolve) => (this.wakeRecorder = resolve));
        continue;
      }
      const byRun = new Map<LaneRun<A>, A[]>();
      for (const { run, attempted } of this.finished.splice(0)) {
        const list = byRun.get(run);
        if (list) list.push(attempted);
        else byRun.set(run, [attempted]);
      }
      for (const [run, attempts] of byRun) await run.recordAll(attempts);
    }
    if (this.sendError !== undefined) throw this.sendError;
  }
}

/** The open lanes of a site in this process, by receiver. */
const LANES = new SitePlugin<Map<string, ReceiverLane<unknown>>>('webhook lanes', () => new Map());

/**
 * Hands `rows` (all to `receiver`) to the receiver's open lane in this process; undefined when it took them. Else
 * opens a lane for them, run until `mayStart()` is false or it is empty, and returns its end: the rows it did not start
 * (its own and those joined since), or a rejection when a write failed.
 */
export function runInLane<A>(
  site: Site,
  receiver: string,
  rows: readonly DocData[],
  run: LaneRun<A>,
  mayStart: () => boolean,
): Promise<DocData[]> | undefined {
  const lanes = LANES.of(site) as Map<string, ReceiverLane<A>>;
  if (lanes.get(receiver)?.join(rows, run)) return undefined;
  const lane: ReceiverLane<A> = new ReceiverLane<A>(mayStart, () => {
    if (lanes.get(receiver) === lane) lanes.delete(receiver);
  });
  lanes.set(receiver, lane);
  lane.add(rows, run);
  return lane.done;
}
