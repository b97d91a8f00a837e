// A subscription to one Redis channel that outlives Redis outages. It has a connection of its own (a duplicate of the
// site's) and subscribes again itself each time that connection is ready. ioredis's automatic re-subscribe leaves
// its command's promise unhandled: when Redis drops again before answering it, the rejection (MaxRetriesPerRequest)
// is unhandled and ends the process. Notices published while the connection was away are lost, so the owner is told
// when the subscription is live again and can drop what it may have missed.
import type Redis from 'ioredis';

/** What a subscription tells its owner. */
export interface SubscriptionHandlers {
  message(message: string): void;
  /** The subscription is confirmed, the first time and after each reconnect: every notice from now on arrives. */
  live?(): void;
  /** The connection dropped: notices are missed until `live` is called again. */
  lost?(): void;
}

/** One channel of the site's Redis, followed across outages. */
export class RedisSubscription {
  private readonly sub: Redis;
  private live = false;
  private closed = false;

  constructor(
    redis: Redis,
    private readonly channel: string,
    private readonly handlers: SubscriptionHandlers,
  ) {
    this.sub = redis.duplicate({ autoResubscribe: false, lazyConnect: false });
    this.sub.on('error', () => this.dropped());
    this.sub.on('close', () => this.dropped());
    this.sub.on('ready', () => this.subscribe());
    this.sub.on('message', (_channel: string, message: string) => this.handlers.message(message));
  }

  /** True while the subscription is confirmed and its connection open. */
  get isLive(): boolean {
    return this.live;
  }

  /** Resolves once every notice published before the call has been received; rejects if Redis does not answer. */
  async barrier(): Promise<void> {
    await this.sub.ping();
  }

  /** Closes the connection at once (nothing to flush on a subscribing connection; a frozen Redis would never answer QUIT). */
  close(): void {
    this.closed = true;
    this.live = false;
    this.sub.removeAllListeners('close');
    this.sub.removeAllListeners('ready');
    this.sub.disconnect();
  }

  private subscribe(): void {
    this.sub.subscribe(this.channel).then(
      () => {
        if (this.closed || this.live || this.sub.status !== 'ready') return;
        this.live = true;
        this.handlers.live?.();
      },
      () => this.dropped(),
    );
  }

  private dropped(): void {
    if (!this.live) return;
    this.live = false;
    this.handlers.lost?.();
  }
}
