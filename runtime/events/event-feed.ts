// The live tail of a site's event log: while something listens (an SSE stream, a socket subscribed to a DocType or a
// document), it reads the events committed after the last one it delivered and hands each batch, in id order, to every
// listener. It is woken by this process's own commits, by other processes' commits through Redis (a notice on one
// channel, when REDIS_URL is set) and by a poll (other processes without Redis). Every process tails the shared log
// itself, which is why socket.io's Redis adapter is not used: the log is already the ordered record every process
// reads, SSE resumes from it, and a notice lost while Redis is away costs only the poll's delay, never an event.
// With no listener nothing is read and no timer runs: a commit costs one property check.
import { logger } from '../log/logger';
import { RedisSubscription } from '../redis/redis-subscription';
import { publishNotice, siteRedis } from '../redis/site-redis';
import { SitePlugin, type Site } from '../site';
import { eventsAfter, logBounds, type EventRow } from './event-log';

/** Gets each batch of newly committed events, in id order. */
export type FeedListener = (events: readonly EventRow[]) => void;

/** Events read per query. */
const BATCH = 500;
/** How long a gap in the ids (MariaDB: a transaction still open, or rolled back) holds back the events after it. */
const GAP_WAIT_MS = 3000;
/** How often the log is read while something listens (other processes' commits without Redis, or Redis down). */
const POLL_MS = 250;
/** The same with a live Redis subscription (a safety net for notices lost in an outage). */
const POLL_WITH_REDIS_MS = 1000;
/** How soon a read is retried while a gap holds events back. */
const GAP_RETRY_MS = 20;

/** One site's tail of the event log. */
export class EventFeed {
  /** The id of the last event delivered; -1 until the first listener has started the tail. */
  private head = -1;
  private readonly listeners = new Set<FeedListener>();
  private starting: Promise<void> | undefined;
  private reading = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /**
   * The highest id of each read that found a new one, and when: an id missing below it was first seen missing then.
   * Every gap's wait runs from that first sight, so gaps found together end together (one wait, not one each).
   */
  private seen: { id: number; at: number }[] = [];
  private subscription: RedisSubscription | undefined;
  /** When the log was last read (the poll skips a tick soon after one while Redis tells of commits). */
  private lastRead = 0;
  private announcing = false;
  private closed = false;
  /** The Redis channel commits are announced on (undefined without REDIS_URL). */
  private readonly channel: string | undefined;

  constructor(private readonly site: Site) {
    const redis = site.config.redisUrl ? siteRedis(site) : undefined;
    this.channel = redis ? `${redis.prefix}events` : undefined;
  }

  /** True when a commit must be told (something listens here, or other processes may: Redis). */
  get wantsCommits(): boolean {
    return this.listeners.size > 0 || this.channel !== undefined;
  }

  /** True while something listens. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /**
   * Adds a listener; resolves with the id it is delivered from: events up to that id it reads itself (a resume),
   * events after it arrive through the listener (some may arrive before the promise resolves: compare ids).
   */
  async listen(listener: FeedListener): Promise<number> {
    this.listeners.add(listener);
    if (this.head < 0) await (this.starting ??= this.start());
    return this.head;
  }

  /** Removes a listener; the last one out stops the tail. */
  unlisten(listener: FeedListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) this.stop();
  }

  /** After a commit that wrote events: wakes this tail and tells the other processes. Never fails. */
  readonly committed = (): Promise<void> => {
    this.wake();
    if (this.channel && !this.announcing) {
      this.announcing = true;
      // One notice per turn of the event loop, however many documents it committed.
      setImmediate(() => {
        this.announcing = false;
        const entry = siteRedis(this.site);
        if (entry && this.channel) void publishNotice(entry, this.channel, '1');
      });
    }
    return Promise.resolve();
  };

  /** Reads what was committed since the last read (or notes that a read in progress must go again). */
  wake(): void {
    if (this.listeners.size === 0 || this.head < 0 || this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.read();
  }

  /** Stops the tail and drops the listeners (the site is closing). */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private async start(): Promise<void> {
    let newest: number;
    try {
      ({ newest } = await logBounds(this.site));
    } finally {
      // A failed start is tried again by the next listener.
      this.starting = undefined;
    }
    this.head = newest;
    if (this.listeners.size === 0 || this.closed) return this.stop();
    this.follow();
  }

  /** Starts the poll and, with Redis, the subscription to other processes' notices. */
  private follow(): void {
    const entry = this.channel ? siteRedis(this.site) : undefined;
    if (entry && this.channel && !this.subscription)
      this.subscription = new RedisSubscription(entry.redis, this.channel, {
        message: () => this.wake(),
        live: () => this.wake(),
      });
    // Every POLL_MS; while the subscription is live, a tick within POLL_WITH_REDIS_MS of the last read is skipped (the
    // notices wake the tail). A subscription that is not live (Redis down) leaves the poll at POLL_MS.
    this.timer ??= setInterval(() => {
      if (this.subscription?.isLive && Date.now() - this.lastRead < POLL_WITH_REDIS_MS) return;
      this.wake();
    }, POLL_MS);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = undefined;
    this.subscription?.close();
    this.subscription = undefined;
    // The next listener starts from the log's end again: nothing is read while nobody listens.
    if (!this.starting) this.head = -1;
    this.seen = [];
  }

  private async read(): Promise<void> {
    this.reading = true;
    this.lastRead = Date.now();
    try {
      do {
        this.again = false;
        const from = this.head;
        const rows = await eventsAfter(this.site, from, BATCH);
        if (this.head !== from || this.listeners.size === 0) break;
        const ready = this.inOrder(rows);
        if (ready.length === 0) continue;
        this.head = (ready[ready.length - 1] as EventRow).id;
        for (const listener of [...this.listeners]) {
          try {
            listener(ready);
          } catch (err) {
            logger().warn({ event: 'event_listener_failed', err: String(err) }, 'an event listener failed');
          }
        }
        if (ready.length === BATCH) this.again = true;
      } while (this.again && this.listeners.size > 0 && !this.closed);
    } catch (err) {
      logger().warn({ event: 'event_feed_read_failed', err: String(err) }, 'reading the event log failed');
    } finally {
      this.reading = false;
    }
  }

  /**
   * The rows that can be delivered now: up to a missing id, unless GAP_WAIT_MS have passed since a read first found an
   * id after it (a rolled-back transaction's id never comes; an open one's comes at its commit).
   */
  private inOrder(rows: readonly EventRow[]): EventRow[] {
    const now = Date.now();
    const newest = rows[rows.length - 1];
    const last = this.seen[this.seen.length - 1];
    if (newest && (!last || newest.id > last.id)) this.seen.push({ id: newest.id, at: now });
    const ready: EventRow[] = [];
    let expected = this.head + 1;
    for (const row of rows) {
      if (row.id !== expected && this.head > 0) {
        const since = this.seen.find((mark) => mark.id > expected)?.at ?? now;
        if (now - since < GAP_WAIT_MS) {
          this.retry ??= setTimeout(() => {
            this.retry = undefined;
            this.wake();
          }, GAP_RETRY_MS);
          break;
        }
      }
      ready.push(row);
      expected = row.id + 1;
    }
    // Marks at or below what is delivered tell nothing more.
    while (this.seen.length && (this.seen[0] as { id: number }).id < expected) this.seen.shift();
    return ready;
  }
}

/** The site's event feed (its tail and its Redis subscription close with the site). */
export const EVENT_FEED = new SitePlugin<EventFeed>(
  'event feed',
  (site) => new EventFeed(site),
  (feed) => feed.close(),
);
