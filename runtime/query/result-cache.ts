// Remembered list pages, counts and documents on MariaDB and PostgreSQL. Pages and counts are shared by the requests of every user whose
// query compiles to the same SQL and bindings (the reader's restrictions are in them); a document is its stored row and
// child rows (GET one), before any permission check or field-level filtering, which every request still applies. Each carries the change stamp of the tables its SQL reads
// (change-stamps.ts), read before the query ran, and is served only while a stamp read after the request asked is the
// same, so several processes on one database never answer from before a write another has acknowledged. Bounded in
// entries and in bytes (site config `result_cache_entries`, `result_cache_bytes`), least recently used first out.
// A query that reads anything but `tab…` tables, or calls a function whose value changes by itself, is never kept.
import type { Knex } from 'knex';
import type { ResultCacheLimits } from '../db/backend';
import type { CompiledSlot, RememberedQuery, RowSet, SelectSource } from '../db/compiled-query';
import { tableFields } from '../registry/field-lists';
import { copyValue } from '../document/copy-value';
import type { DocData } from '../db/row-store';
import type { DocTypeBinding, Registry } from '../registry/registry';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import {
  isCurrent,
  openChangeStamps,
  stampOf,
  type ChangeStamps,
  type Reading,
  type Stamp,
} from './change-stamps';

/** A remembered document (its own entry shape, so it is never taken for a page). */
interface RememberedDoc {
  doc: DocData;
}

interface Entry {
  /** The versions of `tables` read before the value was. */
  stamp: Stamp;
  tables: readonly string[];
  value: RowSet | number | RememberedDoc;
  bytes: number;
  /** Served since it was last passed over for eviction (a second chance instead of moving it on every hit). */
  used: boolean;
}

/** What a document of one DocType is remembered by: a key prefix, and the tables reading it reads (sorted). */
interface DocTables {
  prefix: string;
  tables: string[];
}

const docTables = new WeakMap<Registry, WeakMap<DocTypeBinding, DocTables>>();

function docTablesOf(binding: DocTypeBinding, registry: Registry): DocTables {
  let byBinding = docTables.get(registry);
  if (!byBinding) docTables.set(registry, (byBinding = new WeakMap()));
  let found = byBinding.get(binding);
  if (!found) {
    const { tableName } = binding.meta;
    const tables = new Set([
      tableName,
      ...tableFields(binding.meta, registry).map((t) => t.child.meta.tableName),
    ]);
    // \u0001 first: no page or count key (SQL text) starts so.
    found = { prefix: `\u0001doc\u0000${tableName}\u0000`, tables: [...tables].sort() };
    byBinding.set(binding, found);
  }
  return found;
}

// Tables quoted as MariaDB quotes them (`tab…`) or as PostgreSQL does ("tab…").
const FROM = /\b(?:from|join)\s+(`[^`]*`|"(?:[^"]|"")*"|[^\s(),]+)/gi;
// MariaDB's functions whose value changes by itself, then PostgreSQL's (some of its own take no parentheses).
const VOLATILE =
  /\b(?:now|curdate|curtime|current_date|current_time|current_timestamp|sysdate|utc_date|utc_time|utc_timestamp|unix_timestamp|rand|uuid|uuid_short|connection_id|last_insert_id|localtime|localtimestamp|random|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|gen_random_uuid|nextval|currval|setval|lastval|txid_current|pg_backend_pid)\s*\(|\b(?:current_date|current_time|current_timestamp|localtime|localtimestamp|current_user|session_user|current_role)\b/i;
const TABLE = /^(?:`(tab[^`]+)`|"(tab(?:[^"]|"")+)")$/;

/** The `tab…` tables `sql` reads, sorted; undefined when it reads another table or calls a volatile function. */
export function tablesRead(sql: string): string[] | undefined {
  if (VOLATILE.test(sql)) return undefined;
  const tables = new Set<string>();
  for (const match of sql.matchAll(FROM)) {
    const quoted = TABLE.exec(match[1]!);
    const table = quoted?.[1] ?? quoted?.[2]?.replace(/""/g, '"');
    if (table === undefined) return undefined;
    tables.add(`tab${table.slice(3)}`);
  }
  return tables.size ? [...tables].sort() : undefined;
}

/** A compiled query's key, or null when its result may not be remembered. */
export function rememberedQuery(query: Knex.QueryBuilder): RememberedQuery | null {
  const { sql, bindings } = query.toSQL();
  const tables = tablesRead(sql);
  return tables ? { key: `${sql}\u0000${JSON.stringify(bindings)}`, tables } : null;
}

/** About the JSON length of a page's rows. */
function sizeOf(rows: readonly unknown[][]): number {
  let size = 2;
  for (const row of rows) {
    size += 2;
    for (const value of row) {
      if (typeof value === 'string') size += value.length + 3;
      else if (
        value === null ||
        value === undefined ||
        typeof value === 'number' ||
        typeof value === 'boolean'
      )
        size += 8;
      else size += JSON.stringify(value)?.length ?? 8;
    }
  }
  return size;
}

/** The remembered results of one site whose database has a change counter. */
export class ResultCache {
  private entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly stamps: ChangeStamps,
    private readonly limits: ResultCacheLimits,
  ) {}

  /**
   * The rows of a SELECT: remembered ones while their tables are unchanged, else `run`'s (remembered for next time).
   * The set is shared with the other requests it answers: callers must change neither it nor its rows. `run` is given
   * the change stamp's reading it will be remembered under (read after the request asked).
   */
  async select(
    source: SelectSource,
    slot: CompiledSlot,
    run: (reading?: Reading) => Promise<RowSet>,
  ): Promise<RowSet> {
    const query = (slot.remembered ??= rememberedQuery(source.build(false)));
    if (!query) return run();
    const reading = await this.stamps.read(query.tables);
    const hit = this.get(query.key, query.tables, reading) as RowSet | undefined;
    if (hit) return hit;
    const stamp = stampOf(reading, query.tables);
    if (!stamp) return run();
    const set = await run(reading);
    const kept: RowSet = { columns: set.columns, rows: set.rows, derived: new Map() };
    this.set(query.key, stamp, query.tables, kept, sizeOf(set.rows) + query.key.length);
    return kept;
  }

  /** A COUNT, remembered like a SELECT's rows. */
  async count(
    build: () => Knex.QueryBuilder,
    slot: CompiledSlot,
    run: (reading?: Reading) => Promise<number>,
  ): Promise<number> {
    const query = (slot.remembered ??= rememberedQuery(build()));
    if (!query) return run();
    const reading = await this.stamps.read(query.tables);
    const hit = this.get(query.key, query.tables, reading) as number | undefined;
    if (hit !== undefined) return hit;
    const stamp = stampOf(reading, query.tables);
    if (!stamp) return run();
    const n = await run(reading);
    this.set(query.key, stamp, query.tables, n, query.key.length + 8);
    return n;
  }

  /**
   * A stored document (not a Single) with its child rows: the remembered one while its tables are unchanged, else
   * `run`'s (remembered for next time when it exists). Each call gets its own copy, but with `shared` a hit is the
   * remembered document itself, for a caller that only reads it and copies what it answers (GET one's serializeDoc).
   */
  async document(
    binding: DocTypeBinding,
    registry: Registry,
    name: string,
    run: () => Promise<DocData | undefined>,
    shared = false,
  ): Promise<DocData | undefined> {
    const { prefix, tables } = docTablesOf(binding, registry);
    const key = prefix + name;
    const reading = await this.stamps.read(tables);
    const hit = this.get(key, tables, reading) as RememberedDoc | undefined;
    if (hit) return shared ? hit.doc : copyValue(hit.doc);
    const stamp = stampOf(reading, tables);
    if (!stamp) return run();
    const doc = await run();
    if (doc) this.set(key, stamp, tables, { doc: copyValue(doc) }, JSON.stringify(doc).length + key.length);
    return doc;
  }

  /** Results held now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** The value under `key` while its stamp is `reading`'s (a stale one is dropped). */
  private get(key: string, tables: readonly string[], reading: Reading): Entry['value'] | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.tables !== tables && !sameTables(entry.tables, tables)) return undefined;
    if (!isCurrent(entry.stamp, tables, reading)) {
      this.delete(key, entry);
      return undefined;
    }
    entry.used = true;
    return entry.value;
  }

  private set(
    key: string,
    stamp: Stamp,
    tables: readonly string[],
    value: Entry['value'],
    bytes: number,
  ): void {
    if (bytes > this.limits.bytes / 4) return;
    const old = this.entries.get(key);
    if (old) this.delete(key, old);
    // The Map's order is insertion order; the oldest entry goes first unless it was served since it was last passed
    // over, which moves it to the end once (least recently used first out, about: a hit costs no move).
    while (
      this.entries.size &&
      (this.entries.size >= this.limits.entries || this.bytes + bytes > this.limits.bytes)
    ) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      if (entry.used) {
        entry.used = false;
        this.entries.set(oldest, entry);
      } else this.bytes -= entry.bytes;
    }
    this.entries.set(key, { stamp, tables, value, bytes, used: false });
    this.bytes += bytes;
  }

  private delete(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

function sameTables(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A site's remembered pages and counts, and its remembered documents apart (GETs of many documents evict no page). */
interface SiteResults {
  cache?: ResultCache;
  documents?: ResultCache;
  stamps?: ChangeStamps;
}

/** The site config's limits (defaults: 1000 results, 4 MB), for pages and counts, and again for documents. */
export function resultCacheLimits(site: Site): ResultCacheLimits {
  const conf = site.config?.site;
  return {
    entries: Math.max(0, Math.floor(Number(conf?.result_cache_entries ?? 1000))),
    bytes: Math.max(0, Math.floor(Number(conf?.result_cache_bytes ?? 4_000_000))),
  };
}

/**
 * A site's remembered results (MariaDB, PostgreSQL: a change counter), opened with the site. The change notices are published after every commit even
 * with remembering off here: the other processes may remember. Closing stops the change notices.
 */
export const RESULT_CACHE = new SitePlugin<SiteResults>(
  'result cache',
  (site) => {
    const state: SiteResults = {};
    const counter = site.db.changeCounter;
    if (counter) {
      const limits = resultCacheLimits(site);
      state.stamps = openChangeStamps(site, counter);
      if (limits.entries > 0 && limits.bytes > 0) {
        state.cache = new ResultCache(state.stamps, limits);
        state.documents = new ResultCache(state.stamps, limits);
      }
    }
    return state;
  },
  (state) => state.stamps?.close(),
);

/** Opens the site's remembered results (once; the site opens). */
export function openResultCache(site: Site): ResultCache | undefined {
  return RESULT_CACHE.of(site).cache;
}

/** The site's remembered results (MariaDB; SQLite's are its row store's), or undefined with remembering off. */
export function resultCacheOf(site: Site): ResultCache | undefined {
  return RESULT_CACHE.of(site).cache;
}

/** The site's remembered documents (MariaDB), or undefined with remembering off. */
export function documentCacheOf(site: Site): ResultCache | undefined {
  return RESULT_CACHE.of(site).documents;
}

/** The site's change stamps (MariaDB), once its remembered results are open. */
export function changeStampsOf(site: Site): ChangeStamps | undefined {
  return RESULT_CACHE.peek(site)?.stamps;
}
