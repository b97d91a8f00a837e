// One load at a time per cache key: when a cached entry expires under load, every request in flight used to miss at
// once and run its own queries (with 50 concurrent clients, ~50 key lookups and ~50 user loads on the event loop every
// 5 seconds, a latency spike for everyone); now the first miss loads and the others wait for that load.
import type { Queryable } from '../db/row-store';

/**
 * Loads in flight, by the connection (or transaction) they read through and a key: callers reading through another
 * Queryable never share a load (a caller inside a transaction must not wait on a read outside it, nor see its rows).
 */
export class SingleFlight<V> {
  private pending = new WeakMap<object, Map<string, Promise<V>>>();

  /** The load of `key` already running through `q`, or a new one started with `load`. */
  run(q: Queryable | object, key: string, load: () => Promise<V>): Promise<V> {
    let byKey = this.pending.get(q);
    if (!byKey) this.pending.set(q, (byKey = new Map()));
    const running = byKey.get(key);
    if (running) return running;
    const map = byKey;
    const started = load().finally(() => {
      if (map.get(key) === started) map.delete(key);
    });
    map.set(key, started);
    return started;
  }

  /** Later calls start new loads (after a write: a load that began before it may read the old rows). */
  forget(): void {
    this.pending = new WeakMap();
  }
}
