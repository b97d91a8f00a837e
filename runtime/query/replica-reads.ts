// A site's read replicas (site config read_replicas, db/read-replicas.ts), opened with the site and closed with it; and
// the list and count reads that go through them (run-query.ts). On SQLite the key is refused when the site opens.
import type { Knex } from 'knex';
import { openReadReplicas, type ReadReplicas } from '../db/read-replicas';
import type { CompiledSlot, RowSet, SelectSource } from '../db/compiled-query';
import { logger } from '../log/logger';
import type { Site } from '../site';
import { SitePlugin } from '../site';
import { counterVersions, type Reading } from './change-stamps';
import { rememberedQuery } from './result-cache';

/** The site's replicas, or none (`read_replicas` empty or unset). */
const READ_REPLICAS = new SitePlugin<{ replicas?: ReadReplicas }>(
  'read replicas',
  (site) => {
    const conf = site.config.site;
    const replicas = openReadReplicas(
      site.config.databaseUrl,
      site.db,
      conf?.read_replicas ?? [],
      site.registry,
      {
        statementMs: conf?.db_statement_timeout ?? 8000,
        acquireMs: conf?.db_acquire_timeout ?? 5000,
        busyMs: conf?.db_busy_timeout ?? 5000,
        site: conf,
        replicaTimeoutMs: conf?.read_replica_timeout ?? 1000,
      },
      logger,
    );
    return replicas ? { replicas } : {};
  },
  (state) => state.replicas?.close(),
);

/**
 * Opens the site's replicas when the site opens: a read_replicas the backend cannot serve fails the start; a replica that
 * replays no primary is named in a warning.
 */
export function openReplicaReads(site: Site): ReadReplicas | undefined {
  const { replicas } = READ_REPLICAS.of(site);
  void replicas?.warnIfNotReplaying();
  return replicas;
}

/** The site's replicas (metrics), when it has some open. */
export function replicaReadsOf(site: Site): ReadReplicas | undefined {
  return READ_REPLICAS.peek(site)?.replicas;
}

/**
 * A list SELECT on a replica fresh enough for a request that asked before `reading` (the change stamp the result cache
 * read, when it did), else on the primary with `primary`.
 */
export function replicaSelect(
  replicas: ReadReplicas,
  source: SelectSource,
  slot: CompiledSlot,
  limitMs: number,
  primary: () => Promise<RowSet>,
  reading?: Reading,
): Promise<RowSet> {
  const tables = (slot.remembered ??= rememberedQuery(source.build(false)))?.tables;
  return replicas.read(
    tables,
    reading && counterVersions(reading),
    limitMs,
    (rows) => rows.select(source, slot, limitMs),
    primary,
  );
}

/** A COUNT, as `replicaSelect`. */
export function replicaCount(
  replicas: ReadReplicas,
  build: () => Knex.QueryBuilder,
  slot: CompiledSlot,
  limitMs: number,
  primary: () => Promise<number>,
  reading?: Reading,
): Promise<number> {
  const tables = (slot.remembered ??= rememberedQuery(build()))?.tables;
  return replicas.read(
    tables,
    reading && counterVersions(reading),
    limitMs,
    (rows) => rows.count(build, slot, limitMs),
    primary,
  );
}
