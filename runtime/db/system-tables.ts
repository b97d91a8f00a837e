// The tables the service keeps besides DocType tables, and their creation (part of every migration).
import type { Knex } from 'knex';
import type { SchemaDialect } from './backend';
import { indexName } from './table-columns';

/** Tables the service keeps besides DocType tables. */
export const SYSTEM_TABLES = {
  singles: 'tabSingles',
  series: 'tabSeries',
  auth: '__Auth',
  sessions: 'tabSessions',
  schema: '__DocTypeSchema',
  /** One row per applied schema change (`svc migrate --history`). */
  migrations: '__SchemaMigration',
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

/** One row of the document event log (`__Event`) as written; the database assigns its `id`. */
export interface EventRecord {
  doctype: string;
  docname: string;
  /** insert, save, submit, cancel, update (after submit) or delete. */
  action: string;
  modified: string | null;
  /** The user who made the change. */
  user: string;
  /** The document's owner (what a delete event's permission is checked against: the row is gone). */
  owner: string | null;
  /** When the change was written (ms since epoch). */
  created_at: number;
}

/** The columns of an event row in the order the row stores bind them. */
export const EVENT_COLUMNS = [
  'doctype',
  'docname',
  'action',
  'modified',
  'user',
  'owner',
  'created_at',
] as const satisfies readonly (keyof EventRecord)[];

/** Creates the system tables that are missing (and the columns newer versions added). */
export async function ensureSystemTables(knex: Knex, dialect: SchemaDialect): Promise<void> {
  const create = async (name: string, build: (t: Knex.CreateTableBuilder) => void) => {
    if (!(await knex.schema.hasTable(name))) await knex.schema.createTable(name, build);
  };
  await create(SYSTEM_TABLES.schema, (t) => {
    t.string('doctype', 140).primary();
    t.string('hash', 64).notNullable();
    t.text('shape').nullable();
  });
  // Sites made before migrations recorded what they compare next time (naming, Select options).
  if (!(await knex.schema.hasColumn(SYSTEM_TABLES.schema, 'shape')))
    await knex.schema.alterTable(SYSTEM_TABLES.schema, (t) => {
      t.text('shape').nullable();
    });
  await create(SYSTEM_TABLES.migrations, (t) => {
    t.increments('id');
    t.string('doctype', 140).notNullable();
    t.string('kind', 32).notNullable();
    t.string('field', 255).nullable();
    t.text('detail').nullable();
    t.text('statements', 'longtext').notNullable();
    t.text('warnings').nullable();
    t.string('applied_at', 32).notNullable();
    t.integer('ms').notNullable().defaultTo(0);
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
