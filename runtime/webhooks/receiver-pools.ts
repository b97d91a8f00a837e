// Kept-alive connections to webhook receivers, one undici Pool per origin and checked address. A pool connects only to
// the address it was made for (its `lookup` answers with it), so a connection kept alive can never reach an address
// that was not checked; a name that now resolves elsewhere gets a pool of its own. TLS connections are kept alive too.
// undici rather than node:http: an attempt on loopback cost the sending process about 40% less CPU (docs/webhooks.md).
// It is loaded by the first delivery, not at start (about 6 MB of heap a site without webhooks would carry).
import type { LookupFunction } from 'node:net';
import type { Pool } from 'undici';
import type { VettedUrl } from './vet-url';

/** Pools kept; the least recently used one is closed past this. */
const MAX_POOLS = 32;

/** Connections per pool (the attempts of a batch run PARALLEL at once). */
const CONNECTIONS = 8;

/** An idle kept-alive connection is closed after this long. */
const KEEP_ALIVE_MS = 30_000;

/** A lookup that answers with the checked address, whatever the name resolves to now. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_host, options, callback) => {
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** The pools of one process's deliveries. */
export class ReceiverPools {
  private readonly pools = new Map<string, Pool>();

  /** The pool for `target`: made on first use, most recently used last. */
  pool(target: VettedUrl): Pool {
    const key = `${target.url.origin}|${target.address}`;
    let pool = this.pools.get(key);
    if (pool) this.pools.delete(key);
    else {
      const { Pool: UndiciPool } = require('undici') as typeof import('undici');
      pool = new UndiciPool(target.url.origin, {
        connections: CONNECTIONS,
        keepAliveTimeout: KEEP_ALIVE_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_MS,
        connect: { lookup: pinnedLookup(target.address, target.family) },
      });
      if (this.pools.size >= MAX_POOLS) {
        const [oldest, evicted] = this.pools.entries().next().value as [string, Pool];
        this.pools.delete(oldest);
        void evicted.close().catch(() => undefined);
      }
    }
    this.pools.set(key, pool);
    return pool;
  }

  /** Closes every pool (their connections end once their requests are answered). */
  async close(): Promise<void> {
    const closing = [...this.pools.values()].map((pool) => pool.destroy().catch(() => undefined));
    this.pools.clear();
    await Promise.all(closing);
  }
}
