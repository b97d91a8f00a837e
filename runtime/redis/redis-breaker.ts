// RedisBreaker: a circuit breaker in front of one Redis connection. While Redis is known to be down (the connection
// closed, a command failed or timed out) calls fail at once with 503 instead of waiting on the connection; one call
// every `retryAfterMs` tries again, and the connection's `ready` event closes the breaker. Each change of state
// logs one line.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../errors/errors';

/** Seconds a client is told to wait (Retry-After) while Redis is down. */
export const REDIS_RETRY_AFTER_S = 2;

/** The breaker of one Redis connection. */
export class RedisBreaker {
  private open = false;
  private openedAt = 0;
  private lastTry = 0;

  constructor(
    private readonly name: string,
    private readonly log: () => Logger,
    private readonly retryAfterMs = 1000,
  ) {}

  /** Follows the connection's events: `ready` closes the breaker, `close` and `error` open it. */
  watch(redis: Redis): void {
    redis.on('ready', () => this.succeeded());
    redis.on('close', () => this.failed('connection closed'));
    redis.on('error', (err: Error & { code?: string }) => this.failed(err.code ?? err.message));
  }

  /** True while calls fail fast. */
  get isOpen(): boolean {
    return this.open;
  }

  /** Runs `call` unless the breaker is open (then 503 at once, but one trial call per `retryAfterMs`). */
  async run<T>(call: () => Promise<T>, what: string): Promise<T> {
    if (this.open && Date.now() - this.lastTry < this.retryAfterMs) throw this.unavailable(what);
    this.lastTry = Date.now();
    try {
      const result = await call();
      this.succeeded();
      return result;
    } catch (err) {
      this.failed((err as { code?: string }).code ?? (err as Error).message);
      throw this.unavailable(what, err);
    }
  }

  /** Opens the breaker (logs when it was closed). */
  failed(reason: string): void {
    if (this.open) return;
    this.open = true;
    this.openedAt = Date.now();
    this.lastTry = Date.now();
    this.log().warn(
      { event: 'redis_unavailable', redis: this.name, reason },
      `redis (${this.name}) unavailable`,
    );
  }

  /** Closes the breaker (logs when it was open). */
  succeeded(): void {
    if (!this.open) return;
    this.open = false;
    this.log().warn(
      { event: 'redis_available', redis: this.name, down_ms: Date.now() - this.openedAt },
      `redis (${this.name}) available again`,
    );
  }

  private unavailable(what: string, cause?: unknown): ServiceUnavailableError {
    return new ServiceUnavailableError(`${what} is unavailable; retry shortly`, {
      headers: { 'Retry-After': String(REDIS_RETRY_AFTER_S) },
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
