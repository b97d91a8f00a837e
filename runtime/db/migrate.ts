// Schema migration: plan (migration-plan.ts), check (migration-checks.ts), apply. A run holds the database's migration
// lock from start to end (processes starting together migrate one at a time) and goes through three phases: the steps
// before the schema sync (patches), the sync, the steps after it. The sync plans only the DocTypes whose recorded hash
// moved (start-up with nothing pending reads one table), unless asked for a full plan (`svc migrate`); a DocType with a
// refused change changes nothing, the others proceed. Each applied change is one JSON log line and one row of the history table.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { logger } from '../log/logger';
import type { DocTypeMeta } from '../meta/types';
import type { Database, SchemaDialect } from './backend';
import { checkPlan } from './migration-checks';
import {
  orphanTable,
  planDocType,
  shapeOf,
  type PlanOptions,
  type RecordedShape,
  type SchemaChange,
} from './migration-plan';
import { ensureSystemTables, SYSTEM_TABLES } from './system-tables';
import { columnSpecs, createTable } from './table-columns';

export { SYSTEM_TABLES } from './system-tables';
export { indexName } from './table-columns';

/** A step of a migration run before or after the schema sync (patches), under the run's lock. */
export type MigrationStep = (knex: Knex) => Promise<void>;

/** The steps around the schema sync. */
export interface MigrationPhases {
  beforeSync?: readonly MigrationStep[];
  afterSync?: readonly MigrationStep[];
}

/** How to migrate. */
export interface MigrateOptions extends PlanOptions {
  /** Plan and check only: nothing is written, no lock is taken. */
  dryRun?: boolean;
  /** Plan every DocType (and orphan tables), not only those whose schema hash moved. */
  full?: boolean;
  phases?: MigrationPhases;
  /** DocTypes synced on their own first, before the `beforeSync` steps (the Patch Log the patches record into). */
  syncFirst?: readonly DocTypeMeta[];
}

/** Result of a migration. */
export interface MigrateResult {
  /** DocTypes whose table was created or altered. */
  changed: string[];
  /** Every change planned, refused ones included (with their refusal). */
  plan: SchemaChange[];
  /** The refused changes. */
  refused: SchemaChange[];
}

/** Whether a change of a plan would do something (a statement, or a refusal to say). */
export function isPending(change: SchemaChange): boolean {
  return change.statements.length > 0 || change.refusal !== undefined;
}

/** Client-side limit of a migration statement (a type change copies the table; requests keep their own limit). */
const STATEMENT_MS = 6 * 3600_000;
/** Schema hash rows per INSERT (three bindings each: under the 999 bound parameters older SQLite builds allow). */
const HASH_ROWS_PER_INSERT = 300;
/** Tables named `tab…` that are the service's own, not a DocType's. */
const OWN_TABLES: ReadonlySet<string> = new Set([
  SYSTEM_TABLES.singles,
  SYSTEM_TABLES.series,
  SYSTEM_TABLES.sessions,
]);

function schemaHash(meta: DocTypeMeta): string {
  const spec = columnSpecs(meta).map((c) => `${c.name}:${c.index ?? ''}`);
  const types = meta.fields.map((f) => `${f.fieldname}:${f.fieldtype}:${f.length ?? ''}:${f.default ?? ''}`);
  return createHash('sha1')
    .update(JSON.stringify([meta.tableName, spec, types, shapeOf(meta)]))
    .digest('hex');
}

interface Recorded {
  hash: string;
  shape?: RecordedShape;
}

async function readRecorded(
  knex: Knex,
  dialect: SchemaDialect,
  dryRun: boolean,
): Promise<Map<string, Recorded>> {
  if (dryRun && !(await dialect.tables(knex)).has(SYSTEM_TABLES.schema)) return new Map();
  const columns = dryRun ? await dialect.columns(knex, SYSTEM_TABLES.schema) : undefined;
  const rows = (await knex(SYSTEM_TABLES.schema).select(
    columns && !columns.has('shape') ? ['doctype', 'hash'] : ['doctype', 'hash', 'shape'],
  )) as { doctype: string; hash: string; shape?: string | null }[];
  return new Map(
    rows.map((r) => [
      r.doctype,
      { hash: r.hash, ...(r.shape ? { shape: JSON.parse(r.shape) as RecordedShape } : {}) },
    ]),
  );
}

/** Plans and checks the DocTypes that need it. */
async function planAll(
  knex: Knex,
  dialect: SchemaDialect,
  doctypes: readonly DocTypeMeta[],
  recorded: Map<string, Recorded>,
  options: MigrateOptions,
): Promise<{ plan: SchemaChange[]; planned: DocTypeMeta[] }> {
  const stored = doctypes.filter((m) => !m.issingle && !m.isVirtual);
  const planned = stored.filter((m) => options.full || recorded.get(m.name)?.hash !== schemaHash(m));
  // A DocType that had a table and is now a Single (or virtual) leaves that table, rows and all, to no DocType.
  const unstored = doctypes.some((m) => (m.issingle || m.isVirtual) && recorded.has(m.name));
  if (!planned.length && !unstored) return { plan: [], planned };
  const tables = await dialect.tables(knex);
  const plan: SchemaChange[] = [];
  for (const meta of planned) {
    const exists = tables.has(meta.tableName);
    const live = exists
      ? {
          columns: await dialect.columns(knex, meta.tableName),
          indexes: await dialect.indexes(knex, meta.tableName),
        }
      : undefined;
    plan.push(...planDocType(knex, dialect, meta, live, recorded.get(meta.name)?.shape, options));
  }
  const owned = new Set(stored.map((m) => m.tableName));
  for (const table of [...tables].sort())
    if (table.startsWith('tab') && !owned.has(table) && !OWN_TABLES.has(table)) plan.push(orphanTable(table));
  return { plan: await checkPlan(knex, dialect, plan), planned };
}

/** A row of the history table: an applied change, or (kind `failed`) a DocType's change that failed part-way. */
interface HistoryRow {
  doctype: string;
  kind: SchemaChange['kind'] | 'failed';
  field: string | null;
  detail: string;
  statements: string;
  warnings: string | null;
  applied_at: string;
  ms: number;
}

/** The history row of one applied change. */
function historyRow(change: SchemaChange, ms: number, appliedAt: string): HistoryRow {
  return {
    doctype: change.doctype,
    kind: change.kind,
    field: change.field ?? null,
    detail: change.detail,
    statements: JSON.stringify(change.statements),
    warnings: change.warnings.length ? JSON.stringify(change.warnings) : null,
    applied_at: appliedAt,
    ms,
  };
}

/** Applies the plan: new tables at once, then each altered DocType all or nothing; records hashes and history. */
async function applyPlan(
  knex: Knex,
  dialect: SchemaDialect,
  plan: SchemaChange[],
  planned: DocTypeMeta[],
  recorded: Map<string, Recorded>,
): Promise<{ changed: string[]; refused: SchemaChange[] }> {
  const byDocType = new Map<string, SchemaChange[]>();
  for (const change of plan) {
    if (change.kind === 'orphan_table') continue;
    const list = byDocType.get(change.doctype) ?? [];
    list.push(change);
    byDocType.set(change.doctype, list);
  }
  const refused = plan.filter((c) => c.refusal !== undefined);
  const blocked = new Set(refused.map((c) => c.doctype));
  const changed: string[] = [];
  const history: HistoryRow[] = [];
  const log = logger();
  // A fresh site logs its tables in one line; an existing one logs each change.
  const fresh = recorded.size === 0;

  const creates = planned.filter((m) => byDocType.get(m.name)?.[0]?.kind === 'create_table');
  const started = Date.now();
  await dialect.createTables(
    knex,
    creates.map((m) => createTable(knex, m.tableName, columnSpecs(m), (t) => dialect.tableOptions(t))),
  );
  const stamp = new Date().toISOString();
  for (const meta of creates) {
    const change = byDocType.get(meta.name)![0]!;
    history.push(historyRow(change, 0, stamp));
    if (!fresh)
      log.info(
        { event: 'schema_migrated', doctype: meta.name, change: change.kind },
        `created ${meta.tableName}`,
      );
    changed.push(meta.name);
  }
  if (fresh && creates.length)
    log.info(
      { event: 'schema_created', tables: creates.length, ms: Date.now() - started },
      'created the tables',
    );

  for (const meta of planned) {
    const changes = byDocType.get(meta.name) ?? [];
    if (blocked.has(meta.name) || changes[0]?.kind === 'create_table') continue;
    const applied: { change: SchemaChange; ms: number }[] = [];
    /** The statements of the change running now that have run. */
    const ran: string[] = [];
    try {
      await dialect.atomically(knex, async () => {
        for (const change of changes) {
          const at = Date.now();
          ran.length = 0;
          for (const sql of change.statements) {
            await knex.raw(sql).options({ timeout: STATEMENT_MS });
            ran.push(sql);
          }
          applied.push({ change, ms: Date.now() - at });
        }
      });
    } catch (err) {
      // A statement the checks did not foresee failed: the DocType is refused.
      const failed = changes[applied.length] ?? changes[0]!;
      const reason = String((err as Error).message ?? err).split('\n')[0];
      blocked.add(meta.name);
      refused.push(failed);
      const done = applied.reduce((n, a) => n + a.change.statements.length, 0) + ran.length;
      if (dialect.ddlRollsBack || !done) {
        failed.refusal = `${meta.name}: ${failed.kind} failed: ${reason} (nothing of ${meta.name} changed)`;
        continue;
      }
      // Where DDL commits as it runs, what ran stays: recorded with the failure, and no hash, so that the next run plans
      // this DocType against its table as it is now and applies what is left.
      const total = changes.reduce((n, c) => n + c.statements.length, 0);
      failed.refusal = `${meta.name}: ${failed.kind} (${failed.detail}) failed after ${done} of ${total} statements had run: ${reason}; the table is partly changed (recorded in ${SYSTEM_TABLES.migrations}); the next migration plans what is left and finishes it`;
      const at = new Date().toISOString();
      for (const { change, ms } of applied)
        if (change.kind !== 'removed_field') history.push(historyRow(change, ms, at));
      history.push({
        ...historyRow(failed, 0, at),
        kind: 'failed',
        detail: `${failed.kind} ${failed.detail}: ${reason}`,
        statements: JSON.stringify(ran),
      });
      log.error(
        {
          event: 'schema_migration_partial',
          doctype: meta.name,
          change: failed.kind,
          applied: applied.map((a) => a.change.kind),
          statements: ran,
          err: reason,
        },
        failed.refusal,
      );
      continue;
    }
    const at = new Date().toISOString();
    for (const { change, ms } of applied) {
      if (change.kind === 'removed_field') continue;
      history.push(historyRow(change, ms, at));
      log.info(
        {
          event: 'schema_migrated',
          doctype: change.doctype,
          change: change.kind,
          ...(change.field ? { field: change.field } : {}),
          detail: change.detail,
          statements: change.statements,
          ...(change.warnings.length ? { warnings: change.warnings } : {}),
          ms,
        },
        `${change.doctype}: ${change.kind} ${change.detail}`,
      );
    }
    if (applied.some((a) => a.change.statements.length)) changed.push(meta.name);
  }

  for (let i = 0; i < history.length; i += 100)
    await knex(SYSTEM_TABLES.migrations).insert(history.slice(i, i + 100));
  // Recorded once the tables are as planned: where DDL is not transactional (MariaDB), a run that failed records no
  // hash, and the next run plans that DocType again.
  const rows = planned
    .filter((m) => !blocked.has(m.name))
    .map((m) => ({ doctype: m.name, hash: schemaHash(m), shape: JSON.stringify(shapeOf(m)) }));
  const updates = rows.filter((r) => recorded.has(r.doctype));
  const inserts = rows.filter((r) => !recorded.has(r.doctype));
  for (const row of updates)
    await knex(SYSTEM_TABLES.schema)
      .where({ doctype: row.doctype })
      .update({ hash: row.hash, shape: row.shape });
  for (let i = 0; i < inserts.length; i += HASH_ROWS_PER_INSERT)
    await knex(SYSTEM_TABLES.schema).insert(inserts.slice(i, i + HASH_ROWS_PER_INSERT));
  return { changed, refused };
}

/** Plans, checks and applies the sync of `doctypes` in the backend's sync transaction. */
async function syncSchema(
  db: Database,
  doctypes: readonly DocTypeMeta[],
  options: MigrateOptions,
): Promise<MigrateResult> {
  const dialect = db.schema;
  let result: MigrateResult = { changed: [], plan: [], refused: [] };
  await dialect.applySync(db.knex, doctypes, async (knex) => {
    await ensureSystemTables(knex, dialect);
    const recorded = await readRecorded(knex, dialect, false);
    const { plan, planned } = await planAll(knex, dialect, doctypes, recorded, options);
    const { changed, refused } = await applyPlan(knex, dialect, plan, planned, recorded);
    result = { changed, plan, refused };
  });
  return result;
}

/**
 * Syncs the database schema to the DocTypes (or, with `dryRun`, only says what it would do). Never drops a table; drops
 * a column only with `dropRemoved`. Refused changes are returned, not thrown: the caller decides what they stop. The
 * whole run (the `syncFirst` DocTypes, the steps before, the sync, the steps after) holds the migration lock; the steps
 * after the sync do not run when a change was refused.
 */
export async function migrate(
  db: Database,
  doctypes: readonly DocTypeMeta[],
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const dialect = db.schema;
  if (options.dryRun) {
    const recorded = await readRecorded(db.knex, dialect, true);
    const { plan } = await planAll(db.knex, dialect, doctypes, recorded, options);
    return { changed: [], plan, refused: plan.filter((c) => c.refusal !== undefined) };
  }
  return dialect.migrationLock(db.knex, async () => {
    if (options.syncFirst?.length) {
      const first = await syncSchema(db, options.syncFirst, {});
      if (first.refused.length) return first;
    }
    for (const step of options.phases?.beforeSync ?? []) await step(db.knex);
    // The steps after the sync (post_model_sync patches: a renameField among them) still read the removed fields'
    // columns: with such steps, those columns are dropped by a second sync after them, never before.
    const after = options.phases?.afterSync ?? [];
    const dropLater = options.dropRemoved === true && after.length > 0;
    const result = await syncSchema(db, doctypes, dropLater ? { ...options, dropRemoved: false } : options);
    if (result.refused.length) return result;
    for (const step of after) await step(db.knex);
    if (!dropLater) return result;
    const drops = await syncSchema(db, doctypes, { ...options, full: true });
    return {
      changed: [...new Set([...result.changed, ...drops.changed])],
      plan: [...result.plan.filter((c) => c.kind !== 'removed_field'), ...drops.plan],
      refused: drops.refused,
    };
  });
}

/** The applied changes, oldest first (`svc migrate --history`). */
export async function migrationHistory(db: Database): Promise<Record<string, unknown>[]> {
  if (!(await db.schema.tables(db.knex)).has(SYSTEM_TABLES.migrations)) return [];
  return (await db.knex(SYSTEM_TABLES.migrations).select().orderBy('id')) as Record<string, unknown>[];
}
