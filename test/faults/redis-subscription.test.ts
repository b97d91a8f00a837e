// A subscription to a Redis channel across outages, with a private redis-server reached through a small TCP relay that
// can hold back SUBSCRIBE commands: the connection dropped, connected again and its SUBSCRIBE held, then Redis killed
// and the relay closed, refusing connections past the connection's retries: that command is rejected and nothing of it is left unhandled (ioredis's
// own re-subscribe left it unhandled, which ends the process); when Redis is back the subscription is live again,
// says so, and receives notices.
import net from 'node:net';
import Redis from 'ioredis';
import { RedisSubscription } from '../../runtime/redis/redis-subscription';
import { HAVE_REDIS, PrivateRedis } from '../helpers/private-redis';
import { DB_KIND } from '../helpers/test-site';

const PORT = DB_KIND === 'mysql' ? 4724 : 4723;
const RELAY_PORT = PORT + 100;
const run = HAVE_REDIS ? describe : describe.skip;
jest.setTimeout(60_000);

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Relays connections to Redis; while `holding`, a chunk that carries a SUBSCRIBE is kept back (never sent). */
class Relay {
  holding = false;
  held = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => {
    const upstream = net.connect(PORT, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (this.holding && /subscribe/i.test(chunk.toString('latin1'))) this.held++;
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  });

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(RELAY_PORT, '127.0.0.1', resolve));
  }

  /** Drops every relayed connection (a network failure). */
  drop(): void {
    for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    this.drop();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

run('RedisSubscription with a failing Redis (private redis-server)', () => {
  const server = new PrivateRedis(PORT);
  const relay = new Relay();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const clients: Redis[] = [];

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    await server.start();
    await relay.listen();
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    for (const c of clients) c.disconnect();
    await relay.close();
    await server.stop();
  });

  test('Redis gone before its SUBSCRIBE is answered: nothing unhandled, live again once Redis is back', async () => {
    // Options as the site's connection has them; the subscription's connection is the duplicate kept here, through
    // the relay.
    const options = { maxRetriesPerRequest: 1, retryStrategy: () => 100 };
    const base = new Redis(server.url, { ...options, lazyConnect: true });
    let sub: Redis | undefined;
    const site = {
      duplicate: (extra: object) => {
        sub = new Redis(`redis://127.0.0.1:${RELAY_PORT}`, { ...options, ...extra });
        return sub;
      },
    } as unknown as Redis;
    const events: string[] = [];
    const messages: string[] = [];
    const subscription = new RedisSubscription(site, 'ch', {
      message: (m) => messages.push(m),
      live: () => events.push('live'),
      lost: () => events.push('lost'),
    });
    const pub = new Redis(server.url, options);
    clients.push(base, pub, sub as Redis);
    pub.on('error', () => undefined);
    try {
      await until(() => subscription.isLive, 10_000);
      await pub.publish('ch', 'one');
      await until(() => messages.length === 1, 5_000);

      // The connection drops; it connects again and sends its SUBSCRIBE, which the relay holds back; then Redis dies.
      relay.holding = true;
      relay.drop();
      await until(() => relay.held > 0, 5_000);
      expect(events).toEqual(['live', 'lost']);
      // Redis and the relay go: the connection closes with that command unanswered, and reconnecting is refused.
      await relay.close();
      await server.kill();
      // Refused through several reconnect attempts (one retry per command is allowed): the command is rejected.
      await new Promise((r) => setTimeout(r, 1000));
      expect(subscription.isLive).toBe(false);

      relay.holding = false;
      await server.start();
      await relay.listen();
      await until(() => subscription.isLive, 10_000);
      await pub.publish('ch', 'two');
      await until(() => messages.length === 2, 5_000);
      expect(messages).toEqual(['one', 'two']);
      expect(events).toEqual(['live', 'lost', 'live']);
      expect(unhandled).toEqual([]);
    } finally {
      subscription.close();
    }
  });

  test('created while Redis is down: subscribed once Redis is up (the first SUBSCRIBE failed)', async () => {
    await server.kill();
    const options = { maxRetriesPerRequest: 1, retryStrategy: () => 100 };
    const base = new Redis(server.url, { ...options, lazyConnect: true });
    clients.push(base);
    const messages: string[] = [];
    const subscription = new RedisSubscription(base, 'down', { message: (m) => messages.push(m) });
    try {
      // Several reconnect attempts: a SUBSCRIBE queued at creation has been rejected by now.
      await new Promise((r) => setTimeout(r, 1000));
      await server.start();
      await until(() => subscription.isLive, 10_000);
      const pub = new Redis(server.url, options);
      clients.push(pub);
      await pub.publish('down', 'hello');
      await until(() => messages.length === 1, 5_000);
      expect(unhandled).toEqual([]);
    } finally {
      subscription.close();
    }
  });
});
