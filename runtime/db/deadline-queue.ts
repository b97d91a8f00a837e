// Works waiting their turn for a database connection or lock, each answered with an error once its deadline passes,
// even while nothing else moves (the works ahead of it stuck on a frozen server or another process's lock). One timer
// serves the queue: it fires at the earliest deadline, answers every work past its own, and is armed again. Shared by
// the group commits of every backend (SQLite's waiting works, MariaDB's and PostgreSQL's lanes).

/** A work waiting in a DeadlineQueue. */
export interface Waiting {
  /** When it must have been answered (ms since the epoch). */
  at: number;
  reject(err: unknown): void;
}

/** Works in order of arrival; `late()` is the error of one past its deadline (a 503 of the backend). */
export class DeadlineQueue<T extends Waiting> {
  private readonly items: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The deadline the timer fires at. */
  private armedAt = Infinity;

  constructor(private readonly late: () => Error) {}

  get length(): number {
    return this.items.length;
  }

  /** The first work, left in the queue. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.arm(item.at);
  }

  /** Puts works back at the front, in their order (their deadlines stay: one already past is answered now). */
  unshift(items: readonly T[]): void {
    this.items.unshift(...items);
    this.arm(earliest(items));
  }

  /** Takes the first work. */
  shift(): T | undefined {
    return this.items.shift();
  }

  /** Answers `item` (taken from the queue) with the late error when its deadline has passed; says whether it did. */
  answeredLate(item: T): boolean {
    if (item.at > Date.now()) return false;
    item.reject(this.late());
    return true;
  }

  /** Takes every work (each to be answered by the caller). */
  drain(): T[] {
    return this.items.splice(0);
  }

  /** Sets the timer for `at`, unless it runs for that deadline or an earlier one already. */
  private arm(at: number): void {
    if (at >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  /** Answers the works past their deadline, then arms the timer for the next one. */
  private expire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = Date.now();
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i] as T;
      if (item.at > now) continue;
      this.items.splice(i, 1);
      item.reject(this.late());
    }
    this.arm(earliest(this.items));
  }
}

function earliest(items: readonly Waiting[]): number {
  let at = Infinity;
  for (const item of items) at = Math.min(at, item.at);
  return at;
}
