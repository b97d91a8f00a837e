// List and count reads on SQLite: the compiled SELECT runs on the read connection as a cached prepared statement
// (outside any transaction, like document reads), or in a reader thread when its plan may be slow, and its result is
// remembered until the database changes.
import type BetterSqlite3 from 'better-sqlite3';
import type { Knex } from 'knex';
import type { ResultCacheLimits } from '../backend';
import {
  compile,
  type CompiledQuery,
  type CompiledSlot,
  type RowSet,
  type SelectSource,
} from '../compiled-query';
import type { ReaderPool } from './reader-pool';
import { mayBeSlow } from './slow-plans';
import { prepared } from './statements';

/** A remembered page: its rows and what was derived from them. */
interface RememberedPage {
  rows: unknown[][];
  derived: Map<object, unknown>;
}

/**
 * Results read on a SQLite read connection while the database stayed unchanged: counts, and packed pages whose JSON
 * text length bounds their memory (pages of aggregates are read every time).
 */
interface Snapshot {
  version: unknown;
  results: Map<string, RememberedPage | number>;
  /** The JSON text length of the pages held by `results` (a count: none), which bounds their memory. */
  size: number;
  versionStatement: BetterSqlite3.Statement;
}
const snapshots = new WeakMap<BetterSqlite3.Database, Snapshot>();
const DEFAULT_LIMITS: ResultCacheLimits = { entries: 1000, bytes: 4_000_000 };

/**
 * The results remembered on `reader` since the database last changed. The read connection's `PRAGMA data_version`
 * moves whenever another connection (every write goes through knex's) commits, and the results are dropped then, so
 * a remembered result is never stale. The pragma and the read run in the turn's read snapshot (read-snapshot.ts);
 * outside one, a commit between them only makes that read newer than its version, which the next pragma drops.
 */
function snapshotOf(reader: BetterSqlite3.Database): Snapshot {
  let snapshot = snapshots.get(reader);
  if (!snapshot)
    snapshots.set(
      reader,
      (snapshot = {
        version: undefined,
        results: new Map(),
        size: 0,
        versionStatement: reader.prepare('PRAGMA data_version').pluck(),
      }),
    );
  const version = snapshot.versionStatement.get();
  if (version !== snapshot.version) forget(snapshot, version);
  return snapshot;
}

function forget(snapshot: Snapshot, version: unknown): void {
  // A new Map rather than clear(): a cleared Map that lived long enough to be tenured keeps links to its successors,
  // and everything they hold would be tenured with them (measured: old space grows ~4 MB per scavenge under writes).
  snapshot.results = new Map();
  snapshot.size = 0;
  snapshot.version = version;
}

function remember(
  snapshot: Snapshot,
  key: string,
  value: RememberedPage | number,
  size: number,
  limits: ResultCacheLimits = DEFAULT_LIMITS,
): void {
  if (size > limits.bytes / 4 || limits.entries <= 0) return;
  if (snapshot.results.size >= limits.entries || snapshot.size + size > limits.bytes)
    forget(snapshot, snapshot.version);
  snapshot.results.set(key, value);
  snapshot.size += size;
}

function compileInto(slot: CompiledSlot, query: Knex.QueryBuilder): CompiledQuery {
  const compiled = compile(query);
  slot.key = `${compiled.sql}\u0000${JSON.stringify(compiled.bindings)}`;
  slot.compiled = compiled;
  return compiled;
}

/** The SQLite connections list queries run on: the read connection, and the reader threads for slow plans. */
export interface SqliteReaders {
  reader: BetterSqlite3.Database;
  pool?: ReaderPool;
  /** How much may be remembered (site config result_cache_*; default 1000 results, 4 MB). */
  limits?: ResultCacheLimits;
}

/**
 * Runs a SELECT on SQLite: the compilation is kept in `slot` for the next run, rows come back as value lists
 * (better-sqlite3 builds an object per row several times slower than an array) or packed when the source allows,
 * and packed ones are remembered until the database changes. Callers must not modify the rows.
 */
export async function selectOnReader(
  { reader, pool, limits }: SqliteReaders,
  source: SelectSource,
  slot: CompiledSlot,
  limitMs: number,
): Promise<RowSet> {
  let compiled = slot.compiled;
  if (!compiled) {
    const packed = source.packedColumns;
    compiled = compileInto(slot, source.build(packed !== undefined));
    slot.packed = packed !== undefined;
    slot.columns =
      packed ??
      prepared(reader, compiled.sql)
        .columns()
        .map((c) => c.name);
  }
  const columns = slot.columns as string[];
  slot.slow ??=
    pool !== undefined &&
    mayBeSlow(reader, compiled.sql, compiled.bindings, slot.packed ? 'rows' : 'aggregate');
  if (!slot.packed)
    return {
      columns,
      rows: (slot.slow && pool
        ? await pool.run('raw', compiled.sql, compiled.bindings, limitMs)
        : prepared(reader, compiled.sql)
            .raw(true)
            .all(...compiled.bindings)) as unknown[][],
    };
  let snapshot = snapshotOf(reader);
  const remembered = snapshot.results.get(slot.key as string) as RememberedPage | undefined;
  if (remembered) return { columns, ...remembered };
  const version = snapshot.version;
  let texts: string[];
  if (slot.slow && pool) {
    texts = (await pool.run('pluck', compiled.sql, compiled.bindings, limitMs)) as string[];
    // Read in a thread while the event loop went on: kept only if the database has not changed since `version`.
    snapshot = snapshotOf(reader);
  } else
    texts = prepared(reader, compiled.sql)
      .pluck(true)
      .all(...compiled.bindings) as string[];
  const rows = new Array<unknown[]>(texts.length);
  let size = 0;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] as string;
    size += text.length;
    rows[i] = JSON.parse(text) as unknown[];
  }
  const page: RememberedPage = { rows, derived: new Map() };
  if (snapshot.version === version) remember(snapshot, slot.key as string, page, size, limits);
  return { columns, ...page };
}

/** Runs a COUNT query on SQLite and returns the number, remembered until the database changes like SELECTs. */
export async function countOnReader(
  { reader, pool, limits }: SqliteReaders,
  build: () => Knex.QueryBuilder,
  slot: CompiledSlot,
  limitMs: number,
): Promise<number> {
  const compiled = slot.compiled ?? compileInto(slot, build());
  let snapshot = snapshotOf(reader);
  let count = snapshot.results.get(slot.key as string) as number | undefined;
  if (count === undefined) {
    slot.slow ??= pool !== undefined && mayBeSlow(reader, compiled.sql, compiled.bindings, 'count');
    const version = snapshot.version;
    if (slot.slow && pool) {
      count = Number((await pool.run('value', compiled.sql, compiled.bindings, limitMs)) ?? 0);
      snapshot = snapshotOf(reader);
    } else
      count = Number(
        prepared(reader, compiled.sql)
          .pluck()
          .get(...compiled.bindings) ?? 0,
      );
    if (snapshot.version === version) remember(snapshot, slot.key as string, count, 0, limits);
  }
  return count;
}
