// The change stamp of a set of tables on a database with a change counter (Database.changeCounter: MariaDB's and PostgreSQL's): what a
// remembered result carries, and what it must still equal when it is served. A stamp is read after the request asked
// for it, never before, so a write another process acknowledged before that is always in it: from the change counter
// (bumped in every write's transaction) by one small read shared by the requests of an event-loop turn, or, with REDIS_URL and a live
// subscription to the change notices, from this process's own counters of the notices received, once a PING on the
// subscribing connection has come back (Redis answers it after every notice published before it, and a writer
// publishes before it answers its client).
import type Redis from 'ioredis';
import type { ChangeCounter } from '../db/backend';
import { RedisSubscription } from '../redis/redis-subscription';
import { publishNotice, siteRedis } from '../redis/site-redis';
import type { Site } from '../site';

/**
 * A stamp: the source first (-1 the change counter, else the Redis subscription's epoch, which moves whenever it
 * stops or starts, since notices may have been missed), then one version per table in the order asked.
 */
export type Stamp = readonly number[];

/**
 * One read of the change versions, shared by every request that asked before it began: its source (as a stamp's
 * first number) and the version of each table asked (a table without one has no change version).
 */
export interface Reading {
  readonly source: number;
  readonly versions: ReadonlyMap<string, number>;
}

/** The stamp of `tables` in `reading`, or undefined when one has no change version (nothing may be remembered). */
export function stampOf(reading: Reading, tables: readonly string[]): Stamp | undefined {
  const stamp = [reading.source];
  for (const t of tables) {
    const v = reading.versions.get(t);
    if (v === undefined) return undefined;
    stamp.push(v);
  }
  return stamp;
}

/** The versions of `reading` when they are the change counter's (not counts of Redis notices), else undefined. */
export function counterVersions(reading: Reading): ReadonlyMap<string, number> | undefined {
  return reading.source === COUNTER ? reading.versions : undefined;
}

/** Whether `stamp` (of `tables`) is still `reading`'s: the check of every remembered answer, allocating nothing. */
export function isCurrent(stamp: Stamp, tables: readonly string[], reading: Reading): boolean {
  if (stamp.length !== tables.length + 1 || stamp[0] !== reading.source) return false;
  for (let i = 0; i < tables.length; i++) {
    const v = reading.versions.get(tables[i] as string);
    if (v === undefined || v !== stamp[i + 1]) return false;
  }
  return true;
}

/**
 * The requests waiting for the next read: the tables they asked, and one promise for all of them (a request adds
 * its tables and awaits it; no object of its own).
 */
interface Batch {
  tables: Set<string>;
  /** When its first request asked (ms since the epoch): its read ends a statement timeout after, not after it began. */
  askedAt: number;
  /** Requests waiting. */
  waiters: number;
  promise: Promise<Reading>;
  resolve(reading: Reading): void;
  reject(err: unknown): void;
}

function newBatch(): Batch {
  const batch = { tables: new Set<string>(), waiters: 0, askedAt: Date.now() } as Batch;
  batch.promise = new Promise<Reading>((resolve, reject) => {
    batch.resolve = resolve;
    batch.reject = reject;
  });
  // A batch whose read fails is rejected whether or not a request still waits on it.
  batch.promise.catch(() => undefined);
  return batch;
}

const COUNTER = -1;
/** A read waits for more requests while they keep coming, up to this many waiting or this many turns. */
const GATHER = 32;
const GATHER_TURNS = 4;

/** The change notices of a site on Redis, as this process receives them. */
class Notices {
  /** Moves on every start and stop of the subscription. */
  epoch = 1;
  /** Notices received per table. */
  readonly versions = new Map<string, number>();
  private readonly sub: RedisSubscription;

  constructor(redis: Redis, channel: string) {
    this.sub = new RedisSubscription(redis, channel, {
      message: (message) => this.received(message),
      live: () => this.epoch++,
      lost: () => this.epoch++,
    });
  }

  /** The subscription is confirmed and its connection open: every notice published since reaches `versions`. */
  get live(): boolean {
    return this.sub.isLive;
  }

  /** Counts a notice: its tables' versions move. */
  received(message: string): void {
    for (const table of message.split('\n')) this.versions.set(table, (this.versions.get(table) ?? 0) + 1);
  }

  /** Resolves once every notice published before the call has been received (rejects if Redis does not answer). */
  barrier(): Promise<void> {
    return this.sub.barrier();
  }

  close(): void {
    this.sub.close();
  }
}

/** The stamps of one site with a change counter. */
export class ChangeStamps {
  /** The requests that asked since the last read began. */
  private pending: Batch | undefined;
  private running = false;
  private scheduled = false;
  /** Reads of the change counter made (tests; a stamp from the Redis notices reads none). */
  counterReads = 0;

  constructor(
    private readonly counter: ChangeCounter,
    private readonly notices?: Notices,
  ) {}

  /**
   * The change versions of `tables` (and of whatever the other requests of the same read asked), read after this
   * call: compare with `isCurrent`, or make a stamp with `stampOf` before reading what it will stamp.
   */
  read(tables: readonly string[]): Promise<Reading> {
    let batch = this.pending;
    if (!batch) {
      this.pending = batch = newBatch();
      this.schedule();
    }
    batch.waiters++;
    for (const t of tables) batch.tables.add(t);
    return batch.promise;
  }

  /** The current stamp of `tables` (sorted, distinct), read after this call; undefined as in `stampOf`. */
  async stamp(tables: readonly string[]): Promise<Stamp | undefined> {
    return stampOf(await this.read(tables), tables);
  }

  /** Counts this process's own commit at once (its notice comes back later; counting it twice only costs a read). */
  committed(tables: readonly string[]): void {
    if (this.notices) this.notices.received(tables.join('\n'));
  }

  /** Stops listening for notices. */
  async close(): Promise<void> {
    this.notices?.close();
  }

  // One read at a time, and the requests that asked before it began share it: a read already running may have begun
  // before a request asked, so it waits for the next one.
  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    this.seen = 0;
    this.turns = 0;
    setImmediate(this.tick);
  }

  /** Waiters of the pending batch at the previous turn, and the turns it has waited to gather more. */
  private seen = 0;
  private turns = 0;

  // While requests keep arriving turn after turn (the process is busy answering others anyway), the read waits a few
  // turns more and serves them too: fewer reads for as many requests. A turn with no new request starts it.
  private readonly tick = (): void => {
    const waiters = this.pending?.waiters ?? 0;
    if (waiters > this.seen && waiters < GATHER && this.turns < GATHER_TURNS) {
      this.seen = waiters;
      this.turns++;
      setImmediate(this.tick);
      return;
    }
    this.scheduled = false;
    void this.run();
  };

  private async run(): Promise<void> {
    const batch = this.pending;
    this.pending = undefined;
    if (!batch) return;
    this.running = true;
    try {
      batch.resolve(await this.readVersions(batch.tables, batch.askedAt));
    } catch (err) {
      batch.reject(err);
    } finally {
      this.running = false;
      if (this.pending) this.schedule();
    }
  }

  private async readVersions(tables: ReadonlySet<string>, askedAt: number): Promise<Reading> {
    const notices = this.notices;
    if (notices?.live) {
      const epoch = notices.epoch;
      const ok = await notices.barrier().then(
        () => true,
        () => false,
      );
      if (ok && notices.live && notices.epoch === epoch) {
        // A copy of the asked tables' counts now: a notice after the barrier moves `notices.versions`, not this.
        const versions = new Map<string, number>();
        for (const t of tables) versions.set(t, notices.versions.get(t) ?? 0);
        return { source: epoch, versions };
      }
    }
    this.counterReads++;
    const versions = await this.counter.read([...tables], askedAt);
    return { source: COUNTER, versions };
  }
}

function channelOf(prefix: string): string {
  return `${prefix}table-changes`;
}

/**
 * The stamps of a site's change counter, listening for change notices when REDIS_URL is set; the counter is told to
 * drop this process's results and publish after each commit.
 */
export function openChangeStamps(site: Site, counter: ChangeCounter): ChangeStamps {
  const shared = siteRedis(site);
  const stamps = new ChangeStamps(
    counter,
    shared ? new Notices(shared.redis, channelOf(shared.prefix)) : undefined,
  );
  counter.onCommit((tables) => {
    stamps.committed(tables);
    return shared ? publishNotice(shared, channelOf(shared.prefix), tables.join('\n')) : undefined;
  });
  return stamps;
}
