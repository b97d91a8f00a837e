// Read replicas (site config read_replicas): list and count reads go to a replica that has replayed every write the
// primary had acknowledged when the request asked, else the primary answers. Freshness is each backend's (its
// ReplicaPositions: MariaDB's change counter rows, PostgreSQL's WAL LSN): the primary's position is read after the
// request asked (one read shares every request that asked before it began), and a replica's last seen position is kept,
// since it only moves forward: while it already covers what a request needs, the request costs the replica no extra
// read. A replica that does not answer within read_replica_timeout (connect, pool wait, position read), or fails as
// unavailable, is left out for a second, and the primary answers meanwhile: never a hang, never an error of its own.
import type { Logger } from 'pino';
import { QueryTimeoutError, ValidationError } from '../errors/errors';
import type { Registry } from '../registry/registry';
import type { Database, DatabaseOptions, ReplicaPositions } from './backend';
import { backendFor } from './connect';
import type { RowStore } from './row-store';
import { isDeadlockError, unavailableReason } from './unavailable';
import { within } from './within';

/** How long a replica that failed is left out before a request tries it again (ms). */
const RETRY_MS = 1000;

/** Why the primary answered a read that could have gone to a replica. */
export type FallbackReason = 'lag' | 'down' | 'query' | 'conflict';

/**
 * Reads that begin after they are asked for: requests that ask while none is waiting to start share the next one, and
 * one runs at a time (the tables asked are gathered into it).
 */
class FreshReads<P> {
  private pending:
    { tables: Set<string>; promise: Promise<P>; settle: (read: Promise<P>) => void } | undefined;
  private running = false;

  constructor(private readonly readNow: (tables: readonly string[]) => Promise<P>) {}

  /** A read of (at least) `tables` that begins after this call. */
  read(tables: readonly string[]): Promise<P> {
    let batch = this.pending;
    if (!batch) {
      let settle!: (read: Promise<P>) => void;
      const promise = new Promise<P>((resolve) => (settle = resolve));
      this.pending = batch = { tables: new Set(), promise, settle };
      if (!this.running) setImmediate(this.run);
    }
    for (const t of tables) batch.tables.add(t);
    return batch.promise;
  }

  private readonly run = (): void => {
    const batch = this.pending;
    this.pending = undefined;
    if (!batch) return;
    this.running = true;
    const read = this.readNow([...batch.tables]);
    batch.settle(read);
    void read
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        if (this.pending) setImmediate(this.run);
      });
  };
}

/** A replica that did not answer in time. */
class NoAnswer extends Error {}

/** The error of a replica without an answer within `ms`. */
const noAnswer = (ms: number) => () => new NoAnswer(`no answer within ${ms} ms`);

/** One replica: its database, row store, what it is known to have replayed, and whether it is left out. */
class Replica {
  known: unknown;
  /** Left out until then (ms since the epoch); 0 while it answers. */
  downUntil = 0;
  reads = 0;
  readonly positions: FreshReads<unknown>;

  constructor(
    readonly label: string,
    readonly db: Database,
    readonly rows: RowStore,
    positions: ReplicaPositions,
  ) {
    this.positions = new FreshReads((tables) => positions.replica(db, tables));
  }
}

/** What /api/metrics shows of one replica. */
export interface ReplicaState {
  /** `host:port` of its URL. */
  replica: string;
  /** List and count reads it answered. */
  reads: number;
  /** Whether it is in use (not left out after a failure). */
  up: boolean;
}

/** The `host:port` of a database URL (never its user or password). */
function labelOf(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return port ? `${hostname}:${port}` : hostname;
  } catch {
    return 'replica';
  }
}

/** The read replicas of one site's database. */
export class ReadReplicas {
  private readonly primaryReads: FreshReads<unknown>;
  private next = 0;
  /** Reads the primary answered although a replica was configured, by reason. */
  readonly fallbacks: Record<FallbackReason, number> = { lag: 0, down: 0, query: 0, conflict: 0 };

  constructor(
    private readonly positions: ReplicaPositions,
    private readonly replicas: readonly Replica[],
    private readonly timeoutMs: number,
    private readonly log: () => Logger,
  ) {
    this.primaryReads = new FreshReads((tables) => positions.primary(tables));
  }

  /**
   * Runs a list or count read on a replica that has every write acknowledged before this call (of `tables`, the
   * tables the read reads, undefined when unknown), else `onPrimary`. `versions`: the primary's change versions of
   * `tables` read after the request asked, when the caller has them already (the change stamp of a remembered result),
   * saving a read of the primary's position here where they are one (MariaDB). `limitMs`: the read's own time limit
   * (max_query_time); a replica silent past it and read_replica_timeout more is left out, and the primary answers.
   */
  async read<T>(
    tables: readonly string[] | undefined,
    versions: ReadonlyMap<string, number> | undefined,
    limitMs: number,
    onReplica: (rows: RowStore) => Promise<T>,
    onPrimary: () => Promise<T>,
  ): Promise<T> {
    if (this.positions.perTable && !tables?.length) return this.fallback('query', onPrimary);
    const replica = this.pick();
    if (!replica) return this.fallback('down', onPrimary);
    const asked = tables ?? [];
    let position = versions && this.positions.fromChangeVersions(versions);
    if (position === undefined) {
      try {
        position = await this.primaryReads.read(asked);
      } catch {
        return onPrimary(); // the primary's own error (503 while it is down) is the answer
      }
    }
    if (replica.known === undefined || !this.positions.covers(replica.known, position, asked)) {
      try {
        const at = await within(replica.positions.read(asked), this.timeoutMs, noAnswer(this.timeoutMs));
        replica.known = this.positions.merge(replica.known, at);
      } catch (err) {
        this.leaveOut(replica, err);
        return this.fallback('down', onPrimary);
      }
      if (!this.positions.covers(replica.known, position, asked)) return this.fallback('lag', onPrimary);
    }
    let value: T;
    try {
      // The server ends a read past its limit; a frozen one cannot, and a driver may wait for it forever.
      value = await within(
        onReplica(replica.rows),
        limitMs + this.timeoutMs,
        noAnswer(limitMs + this.timeoutMs),
      );
    } catch (err) {
      // A replica cancels a read that conflicts with what it replays (PostgreSQL's recovery conflict, a serialization
      // failure): the primary answers it, and the replica stays in.
      if (isDeadlockError(err, replica.db.errors)) return this.fallback('conflict', onPrimary);
      if (!(await this.failedReplica(replica, err))) throw err;
      return this.fallback('down', onPrimary);
    }
    replica.reads++;
    if (replica.downUntil) this.backUp(replica);
    return value;
  }

  /**
   * The state of each replica (metrics): up until a read on it fails, down from then until one succeeds again (not
   * only for the second it is left out: a dead replica no request has tried since stays down).
   */
  states(): ReplicaState[] {
    return this.replicas.map((r) => ({ replica: r.label, reads: r.reads, up: r.downUntil === 0 }));
  }

  /** Each replica's lag as it reports it (seconds; undefined when it does not answer or is not replaying). */
  async lags(): Promise<{ replica: string; seconds: number | undefined }[]> {
    return Promise.all(
      this.replicas.map(async (r) => ({
        replica: r.label,
        seconds: await within(
          this.positions.lagSeconds(r.db),
          this.timeoutMs,
          noAnswer(this.timeoutMs),
        ).catch(() => undefined),
      })),
    );
  }

  /**
   * Logs a warning for each replica that answers but replays no primary (not a standby, or its replication stopped):
   * every read then falls back to the primary, which the site would otherwise do without a word. Never fails; a
   * replica that does not answer is left to the warning of its first read.
   */
  async warnIfNotReplaying(): Promise<void> {
    await Promise.all(
      this.replicas.map(async (r) => {
        const answered = await within(
          this.positions.lagSeconds(r.db),
          this.timeoutMs,
          noAnswer(this.timeoutMs),
        ).then(
          (seconds) => ({ seconds }),
          () => undefined,
        );
        if (answered && answered.seconds === undefined)
          this.log().warn(
            { event: 'replica_not_replaying', replica: r.label },
            'read replica replays no primary (not a standby, or its replication stopped): the primary answers its reads',
          );
      }),
    );
  }

  /** Closes the replicas' connections. */
  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.db.close()));
  }

  /** The next replica in turn that is not left out, or undefined. */
  private pick(): Replica | undefined {
    const now = Date.now();
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length] as Replica;
      if (replica.downUntil <= now) {
        this.next = (this.next + i + 1) % this.replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  private fallback<T>(reason: FallbackReason, onPrimary: () => Promise<T>): Promise<T> {
    this.fallbacks[reason]++;
    return onPrimary();
  }

  /**
   * Whether the error `err` of a read on `replica` is the replica's fault (it is then left out): unavailable, silent,
   * or a statement past its time limit on a replica that no longer answers a position read in time. A slow query on a
   * replica that answers is the query's own (it would be as slow on the primary).
   */
  private async failedReplica(replica: Replica, err: unknown): Promise<boolean> {
    if (!(err instanceof NoAnswer) && unavailableReason(err, replica.db.errors) === undefined) {
      if (!(err instanceof QueryTimeoutError)) return false;
      const answers = await within(replica.positions.read([]), this.timeoutMs, noAnswer(this.timeoutMs)).then(
        () => true,
        () => false,
      );
      if (answers) return false;
    }
    this.leaveOut(replica, err);
    return true;
  }

  private leaveOut(replica: Replica, err: unknown): void {
    const first = replica.downUntil === 0;
    replica.downUntil = Date.now() + RETRY_MS;
    // It may come back from a restore or a rebuild: what it had replayed is read again.
    replica.known = undefined;
    if (first)
      this.log().warn(
        {
          event: 'replica_unavailable',
          replica: replica.label,
          reason: unavailableReason(err, replica.db.errors) ?? (err as Error).message,
        },
        'read replica unavailable: the primary answers its reads',
      );
  }

  private backUp(replica: Replica): void {
    replica.downUntil = 0;
    this.log().warn({ event: 'replica_available', replica: replica.label }, 'read replica available again');
  }
}

/** How to open a site's replicas: the primary's options, and read_replica_timeout (ms). */
export interface ReplicaOptions extends DatabaseOptions {
  replicaTimeoutMs: number;
}

/**
 * The read replicas of `urls` for the primary `primary` (opened from `primaryUrl`), serving the DocTypes of
 * `registry`; undefined when there are none. Throws ValidationError (a configuration error at start) when a URL is not
 * of the primary's kind, or the primary's backend has no replicas (SQLite).
 */
export function openReadReplicas(
  primaryUrl: string,
  primary: Database,
  urls: readonly string[],
  registry: Registry,
  options: ReplicaOptions,
  log: () => Logger,
): ReadReplicas | undefined {
  if (!urls.length) return undefined;
  const backend = backendFor(primaryUrl);
  const positions = primary.replicaPositions;
  if (!positions)
    throw new ValidationError(
      `site config read_replicas: the ${backend.name} backend has no replicas (use MariaDB or PostgreSQL)`,
    );
  for (const url of urls)
    if (typeof url !== 'string' || !backend.schemes.some((scheme) => url.startsWith(scheme)))
      throw new ValidationError(
        `site config read_replicas: each entry must be a ${backend.schemes.join(' or ')} URL like DATABASE_URL, got ${JSON.stringify(typeof url === 'string' ? labelOf(url) : url)}`,
      );
  const { replicaTimeoutMs, ...primaryOptions } = options;
  const replicas = urls.map((url) => {
    // Connecting and waiting for a pooled connection end within read_replica_timeout; a read within the primary's.
    const db = backend.connect(url, { ...primaryOptions, acquireMs: replicaTimeoutMs });
    return new Replica(labelOf(url), db, db.openRowStore(registry), positions);
  });
  return new ReadReplicas(positions, replicas, replicaTimeoutMs, log);
}
