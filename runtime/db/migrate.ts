// Schema sync: tables `tab<DocType>` with Frappe's standard columns, additive only, a no-op when nothing changed. The
// columns are knex's schema builder's (each backend's knex dialect picks the column types); what differs beyond that
// (catalogue reads, table options, how statements run) is the backend's SchemaDialect (Database.schema).
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { FIELD_TYPE_INFO, assertNever, storesValue } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { Database, SchemaDialect } from './backend';

/** Tables the service keeps besides DocType tables. */
export const SYSTEM_TABLES = {
  singles: 'tabSingles',
  series: 'tabSeries',
  auth: '__Auth',
  sessions: 'tabSessions',
  schema: '__DocTypeSchema',
  /** Background jobs (runtime/jobs): one row per job. */
  jobs: '__Job',
  /** One row per finished item of a running job, written in the transaction of the item's own write. */
  jobItems: '__JobItem',
  /** The latest claimed occurrence of each Scheduler Event script: one process runs an occurrence, the others skip it. */
  scheduledRuns: '__ScheduledRun',
  /** Idempotency-Key records of document creates (runtime/idempotency), kept 24 hours. */
  idempotency: '__Idempotency',
  /** The site's OpenID signing keys (runtime/oauth/signing-keys.ts): private and public JWK per key id. */
  oauthKeys: '__OAuthKey',
  /** The site's document event log (runtime/events): one row per committed write, ids increasing, kept for a time. */
  events: '__Event',
} as const;

/** A column as this service defines it. */
interface ColumnSpec {
  name: string;
  add: (table: Knex.CreateTableBuilder) => void;
  /** Index kind, if the column is indexed. */
  index?: 'unique' | 'plain';
}

function fieldColumn(field: FieldMeta): ColumnSpec['add'] {
  const info = FIELD_TYPE_INFO[field.fieldtype];
  const name = field.fieldname;
  return (t) => {
    switch (info.column) {
      case 'varchar':
        t.string(name, field.length ?? 140).nullable();
        return;
      case 'text':
        t.text(name).nullable();
        return;
      case 'longtext':
        t.text(name, 'longtext').nullable();
        return;
      case 'int':
        t.integer(name).nullable().defaultTo(0);
        return;
      case 'bigint':
        t.bigInteger(name).nullable().defaultTo(0);
        return;
      case 'decimal':
        t.decimal(name, 21, 9).nullable().defaultTo(0);
        return;
      case 'rating':
        t.decimal(name, 3, 2).nullable();
        return;
      case 'check':
        t.tinyint(name).notNullable().defaultTo(0);
        return;
      case 'date':
        t.date(name).nullable();
        return;
      case 'datetime':
        t.datetime(name, { precision: 6 }).nullable();
        return;
      case 'time':
        t.specificType(name, 'time(6)').nullable();
        return;
      case 'json':
        t.text(name, 'longtext').nullable();
        return;
      case 'table':
      case 'none':
        return;
      default:
        assertNever(info.column);
    }
  };
}

/** Column kinds an index can cover without a prefix length (MariaDB cannot index TEXT whole). */
const SORT_INDEXABLE: ReadonlySet<string> = new Set([
  'varchar',
  'int',
  'bigint',
  'decimal',
  'rating',
  'check',
  'date',
  'datetime',
  'time',
]);

/** The columns of a DocType's table, standard ones first. */
export function columnSpecs(meta: DocTypeMeta): ColumnSpec[] {
  const columns: ColumnSpec[] = [
    { name: 'name', add: (t) => t.string('name', 140).primary() },
    {
      name: 'creation',
      add: (t) => t.datetime('creation', { precision: 6 }).nullable(),
      index: meta.istable ? undefined : 'plain',
    },
    {
      name: 'modified',
      add: (t) => t.datetime('modified', { precision: 6 }).nullable(),
      index: meta.istable ? undefined : 'plain',
    },
    { name: 'modified_by', add: (t) => t.string('modified_by', 140).nullable() },
    { name: 'owner', add: (t) => t.string('owner', 140).nullable() },
    { name: 'docstatus', add: (t) => t.integer('docstatus').notNullable().defaultTo(0) },
    { name: 'idx', add: (t) => t.integer('idx').notNullable().defaultTo(0) },
  ];
  if (meta.istable) {
    columns.push(
      { name: 'parent', add: (t) => t.string('parent', 140).nullable(), index: 'plain' },
      { name: 'parentfield', add: (t) => t.string('parentfield', 140).nullable() },
      { name: 'parenttype', add: (t) => t.string('parenttype', 140).nullable() },
    );
  }
  // As Frappe: a field is indexed when its definition asks (search_index), not for being a Link. Indexing every Link
  // made each insert of a Link-rich DocType update dozens of B-trees (ToDo: 8 instead of 4, about a fifth of a
  // create's cost); a DocType filtered by a Link sets search_index on it. The cap keeps MariaDB under its 64 indexes.
  let searchIndexes = 0;
  for (const field of meta.fields) {
    if (!storesValue(field.fieldtype)) continue;
    const indexable = FIELD_TYPE_INFO[field.fieldtype].column === 'varchar';
    let index: ColumnSpec['index'];
    if (field.unique && indexable) index = 'unique';
    // The default list order (sort_field) is read on every list without order_by: index it when its column can be.
    else if (
      field.fieldname === meta.sortField &&
      !meta.istable &&
      SORT_INDEXABLE.has(FIELD_TYPE_INFO[field.fieldtype].column)
    )
      index = 'plain';
    else if (indexable && field.searchIndex && searchIndexes < 40) {
      index = 'plain';
      searchIndexes++;
    }
    columns.push({ name: field.fieldname, add: fieldColumn(field), ...(index ? { index } : {}) });
  }
  return columns;
}

/** An index name unique across the database (SQLite index names are global) and within 64 characters. */
export function indexName(table: string, column: string): string {
  const plain = `idx_${table}_${column}`.replace(/[^A-Za-z0-9_]/g, '_');
  if (plain.length <= 60) return plain;
  return `${plain.slice(0, 48)}_${createHash('sha1').update(plain).digest('hex').slice(0, 10)}`;
}

function schemaHash(meta: DocTypeMeta, specs: ColumnSpec[]): string {
  const spec = specs.map((c) => `${c.name}:${c.index ?? ''}`);
  const types = meta.fields.map((f) => `${f.fieldname}:${f.fieldtype}:${f.length ?? ''}`);
  return createHash('sha1')
    .update(JSON.stringify([meta.tableName, spec, types]))
    .digest('hex');
}

async function existingColumns(knex: Knex, table: string): Promise<Set<string>> {
  const info = await knex(table).columnInfo();
  return new Set(Object.keys(info));
}

/** The CREATE TABLE (and CREATE INDEX) statements of a DocType's table. */
function createTable(
  knex: Knex,
  dialect: SchemaDialect,
  table: string,
  specs: ColumnSpec[],
): Knex.SchemaBuilder {
  return knex.schema.createTable(table, (t) => {
    for (const spec of specs) spec.add(t);
    for (const spec of specs) {
      if (spec.index === 'unique') t.unique([spec.name], { indexName: indexName(table, spec.name) });
      else if (spec.index === 'plain') t.index([spec.name], indexName(table, spec.name));
    }
    dialect.tableOptions(t);
  });
}

/** Adds the columns and indexes an existing table is missing. */
async function alterTable(
  knex: Knex,
  dialect: SchemaDialect,
  table: string,
  specs: ColumnSpec[],
): Promise<void> {
  const have = await existingColumns(knex, table);
  const missing = specs.filter((s) => !have.has(s.name));
  if (missing.length) {
    await knex.schema.alterTable(table, (t) => {
      for (const spec of missing) spec.add(t);
    });
  }
  // Indexes a newer definition adds to existing columns (sort_field, search_index) are created too; none is dropped.
  const indexes = await dialect.indexes(knex, table);
  for (const spec of specs) {
    if (!spec.index || indexes.has(indexName(table, spec.name))) continue;
    await knex.schema.alterTable(table, (t) => {
      if (spec.index === 'unique') t.unique([spec.name], { indexName: indexName(table, spec.name) });
      else t.index([spec.name], indexName(table, spec.name));
    });
  }
}

async function ensureSystemTables(knex: Knex, dialect: SchemaDialect): Promise<void> {
  const create = async (name: string, build: (t: Knex.CreateTableBuilder) => void) => {
    if (!(await knex.schema.hasTable(name))) await knex.schema.createTable(name, build);
  };
  await create(SYSTEM_TABLES.schema, (t) => {
    t.string('doctype', 140).primary();
    t.string('hash', 64).notNullable();
  });
  await create(SYSTEM_TABLES.singles, (t) => {
    t.string('doctype', 140).notNullable();
    t.string('field', 140).notNullable();
    t.text('value', 'longtext').nullable();
    t.primary(['doctype', 'field']);
  });
  await create(SYSTEM_TABLES.series, (t) => {
    t.string('name', 140).primary();
    t.integer('current').notNullable().defaultTo(0);
  });
  await create(SYSTEM_TABLES.auth, (t) => {
    t.string('doctype', 140).notNullable();
    t.string('name', 140).notNullable();
    t.string('fieldname', 140).notNullable();
    t.text('password').notNullable();
    t.primary(['doctype', 'name', 'fieldname']);
  });
  await create(SYSTEM_TABLES.sessions, (t) => {
    t.string('sid', 140).primary();
    t.string('user', 140).notNullable().index(indexName(SYSTEM_TABLES.sessions, 'user'));
    t.text('sessiondata').notNullable();
    t.string('ipaddress', 64).nullable();
    t.datetime('lastupdate', { precision: 6 }).notNullable();
  });
  await create(SYSTEM_TABLES.idempotency, (t) => {
    t.string('id', 64).primary();
    t.string('fingerprint', 64).notNullable();
    t.string('doctype', 140).notNullable();
    t.string('docname', 140).notNullable();
    t.integer('status').nullable();
    t.text('body', 'longtext').nullable();
    t.bigInteger('created_at').notNullable().index(indexName(SYSTEM_TABLES.idempotency, 'created_at'));
  });
  await create(SYSTEM_TABLES.jobs, (t) => {
    t.string('name', 64).primary();
    t.string('kind', 140).notNullable();
    t.string('user', 140).notNullable();
    t.string('status', 16).notNullable().index(indexName(SYSTEM_TABLES.jobs, 'status'));
    t.text('payload', 'longtext').notNullable();
    t.integer('total').notNullable().defaultTo(0);
    t.text('result', 'longtext').nullable();
    t.text('error').nullable();
    t.string('worker', 140).nullable();
    t.bigInteger('lease_until').notNullable().defaultTo(0);
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('finished_at').nullable();
  });
  await create(SYSTEM_TABLES.oauthKeys, (t) => {
    t.string('kid', 64).primary();
    t.text('private_jwk').notNullable();
    t.text('public_jwk').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await create(SYSTEM_TABLES.jobItems, (t) => {
    t.string('job', 64).notNullable();
    t.integer('idx').notNullable();
    t.text('outcome').notNullable();
    t.primary(['job', 'idx']);
  });
  await create(SYSTEM_TABLES.events, (t) => {
    dialect.sequenceKey(t, 'id');
    t.string('doctype', 140).notNullable();
    t.string('docname', 140).notNullable();
    t.string('action', 24).notNullable();
    t.string('modified', 32).nullable();
    t.string('user', 140).notNullable();
    t.string('owner', 140).nullable();
    // No index: pruning finds its cut by the id (the key), as the times grow with it.
    t.bigInteger('created_at').notNullable();
  });
  await create(SYSTEM_TABLES.scheduledRuns, (t) => {
    t.string('script', 140).notNullable();
    t.bigInteger('occurrence').notNullable();
    t.bigInteger('claimed_at').notNullable();
    t.primary(['script', 'occurrence']);
  });
}

/** Schema hash rows per INSERT (two bindings each: under the 999 bound parameters older SQLite builds allow). */
const HASH_ROWS_PER_INSERT = 400;

/** Result of a schema sync. */
export interface MigrateResult {
  /** DocTypes whose table was created or altered. */
  changed: string[];
}

/** Syncs the database schema to the DocTypes. Additive: never drops a table or a column. */
export async function migrate(db: Database, doctypes: DocTypeMeta[]): Promise<MigrateResult> {
  await ensureSystemTables(db.knex, db.schema);
  const known = new Map<string, string>(
    (await db.knex(SYSTEM_TABLES.schema).select('doctype', 'hash')).map(
      (r: { doctype: string; hash: string }) => [r.doctype, r.hash],
    ),
  );
  const changed: string[] = [];
  const dialect = db.schema;
  const sync = async (knex: Knex) => {
    let tables: Set<string> | undefined;
    const creates: Knex.SchemaBuilder[] = [];
    const hashes: { doctype: string; hash: string }[] = [];
    for (const meta of doctypes) {
      if (meta.issingle || meta.isVirtual) continue;
      const specs = columnSpecs(meta);
      const hash = schemaHash(meta, specs);
      if (known.get(meta.name) === hash) continue;
      tables ??= await dialect.tables(knex);
      if (tables.has(meta.tableName)) await alterTable(knex, dialect, meta.tableName, specs);
      else creates.push(createTable(knex, dialect, meta.tableName, specs));
      hashes.push({ doctype: meta.name, hash });
      changed.push(meta.name);
    }
    await dialect.createTables(knex, creates);
    // Recorded once the tables exist: where DDL is not transactional (MariaDB), a run that fails records no hash, and
    // the next run finds the tables it did create and completes them.
    const added = hashes.filter((h) => !known.has(h.doctype));
    for (const { doctype, hash } of hashes)
      if (known.has(doctype)) await knex(SYSTEM_TABLES.schema).where({ doctype }).update({ hash });
    for (let i = 0; i < added.length; i += HASH_ROWS_PER_INSERT)
      await knex(SYSTEM_TABLES.schema).insert(added.slice(i, i + HASH_ROWS_PER_INSERT));
  };
  await dialect.applySync(db.knex, doctypes, sync);
  return { changed };
}
