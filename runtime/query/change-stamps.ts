// The change stamp of a set of tables on MariaDB: what a remembered result carries, and what it must still equal when it
// is served. A stamp is read after the request asked for it, never before, so a write another process acknowledged
// before that is always in it: from the change counter (`__Change`, bumped in every write's transaction, see
// db/table-changes.ts) by one small query shared by the requests of an event-loop turn, or, with REDIS_URL and a live
// subscription to the change notices, from this process's own counters of the notices received, once a PING on the
// subscribing connection has come back (Redis answers it after every notice published before it, and a writer
// publishes before it answers its client).
import type Redis from 'ioredis';
import { RedisSubscription } from '../auth/redis-subscription';
import { siteRedis } from '../auth/site-redis';
import { DEFAULT_TIMEOUTS, type Database } from '../db/connect';
import { execute, onPooledConnection } from '../db/mysql-statements';
import { CHANGE_TABLE } from '../db/table-changes';
import type { Site } from '../site';

/**
 * A stamp: the source first (-1 the change counter, else the Redis subscription's epoch, which moves whenever it
 * stops or starts, since notices may have been missed), then one version per table in the order asked.
 */
export type Stamp = readonly number[];

/** One request's wait for a stamp. */
interface Waiter {
  tables: readonly string[];
  resolve(stamp: Stamp | undefined): void;
  reject(err: unknown): void;
}

const COUNTER = -1;

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

/** The stamps of one MariaDB site. */
export class ChangeStamps {
  private queue: Waiter[] = [];
  private running = false;
  private scheduled = false;
  /** Reads of the change counter made (tests; a stamp from the Redis notices reads none). */
  counterReads = 0;
  /** The read's SQL text by the number of tables asked (a prepared statement per connection, see mysql-statements). */
  private readonly texts = new Map<number, string>();

  constructor(
    private readonly db: Database,
    private readonly notices?: Notices,
  ) {}

  /**
   * The current stamp of `tables` (sorted, distinct), read after this call; undefined when a table has no change
   * version (nothing read from it may be remembered).
   */
  stamp(tables: readonly string[]): Promise<Stamp | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tables, resolve, reject });
      this.schedule();
    });
  }

  /** Counts this process's own commit at once (its notice comes back later; counting it twice only costs a read). */
  committed(tables: readonly string[]): void {
    if (this.notices) this.notices.received(tables.join('\n'));
  }

  /** Stops listening for notices. */
  async close(): Promise<void> {
    this.notices?.close();
  }

  // One read at a time, and the requests of a turn share it: a read already running may have begun before a waiter
  // asked, so it waits for the next one.
  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    const waiters = this.queue;
    this.queue = [];
    if (!waiters.length) return;
    this.running = true;
    try {
      const read = await this.read(waiters);
      for (const w of waiters) w.resolve(read(w.tables));
    } catch (err) {
      for (const w of waiters) w.reject(err);
    } finally {
      this.running = false;
      if (this.queue.length) this.schedule();
    }
  }

  private async read(waiters: Waiter[]): Promise<(tables: readonly string[]) => Stamp | undefined> {
    const notices = this.notices;
    if (notices?.live) {
      const epoch = notices.epoch;
      const ok = await notices.barrier().then(
        () => true,
        () => false,
      );
      if (ok && notices.live && notices.epoch === epoch)
        return (tables) => [epoch, ...tables.map((t) => notices.versions.get(t) ?? 0)];
    }
    const wanted =
      waiters.length === 1 ? [...waiters[0]!.tables] : [...new Set(waiters.flatMap((w) => w.tables))];
    let sql = this.texts.get(wanted.length);
    if (sql === undefined)
      this.texts.set(
        wanted.length,
        (sql = `select tab, sum(version) as v from \`${CHANGE_TABLE}\` where tab in (${wanted.map(() => '?').join(', ')}) group by tab`),
      );
    const text = sql;
    this.counterReads++;
    const { rows } = await onPooledConnection(this.db, (conn) =>
      execute<unknown[][]>(conn, text, wanted, this.db.statementMs ?? DEFAULT_TIMEOUTS.statementMs, true),
    );
    const versions = new Map(rows.map((r) => [String(r[0]), Number(r[1])]));
    return (tables) => {
      const stamp = [COUNTER];
      for (const t of tables) {
        const v = versions.get(t);
        if (v === undefined) return undefined;
        stamp.push(v);
      }
      return stamp;
    };
  }
}

function channelOf(prefix: string): string {
  return `${prefix}table-changes`;
}

/**
 * The stamps of a MariaDB site, listening for change notices when REDIS_URL is set; the database's change counter is
 * told to drop this process's results and publish after each commit.
 */
export function openChangeStamps(site: Site): ChangeStamps {
  const shared = siteRedis(site);
  const stamps = new ChangeStamps(
    site.db,
    shared ? new Notices(shared.redis, channelOf(shared.prefix)) : undefined,
  );
  if (site.db.changes)
    site.db.changes.committed = (tables) => {
      stamps.committed(tables);
      if (!shared || shared.breaker.isOpen) return;
      return shared.redis.publish(channelOf(shared.prefix), tables.join('\n')).then(
        () => undefined,
        () => undefined,
      );
    };
  return stamps;
}
