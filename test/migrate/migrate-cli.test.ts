// `svc migrate` and `svc serve` as real processes on a site holding documents: usage errors, a refused change (exit 1,
// the reason on one line, the table untouched), a dry run that changes nothing, two processes migrating at once, the
// history, auto_migrate false, and the API after a type change (filter and sort on the converted column).
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { runGenerator } from '../../generator/run-generator';
import { createApp } from '../../runtime/app';
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'test/tmp', `migrate-cli-${process.pid}-${randomBytes(4).toString('hex')}`);
const TABLE = 'tabMig Widget';
let url: string;
let knex: Knex;
let dropDb: () => Promise<void> = async () => undefined;

/** Generates the repo's DocTypes plus Mig Widget with `fields` into DIR/<version>. */
async function generateVersion(version: string, fields: Record<string, unknown>[]): Promise<string> {
  const folder = path.join(DIR, `doctypes-${version}`, 'test', 'mig_widget');
  mkdirSync(folder, { recursive: true });
  const json = {
    doctype: 'DocType',
    name: 'Mig Widget',
    module: 'Test',
    autoname: 'field:title',
    fields: [{ fieldname: 'title', fieldtype: 'Data', reqd: 1 }, ...fields],
    permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 }],
  };
  writeFileSync(path.join(folder, 'mig_widget.json'), JSON.stringify(json, null, 2));
  const out = path.join(DIR, `gen-${version}`);
  await runGenerator({
    doctypes: ['doctypes', path.relative(ROOT, path.join(DIR, `doctypes-${version}`))],
    out,
    cwd: ROOT,
  });
  return out;
}

let v1: string;
let v2: string;

beforeAll(async () => {
  mkdirSync(DIR, { recursive: true });
  v1 = await generateVersion('v1', [
    { fieldname: 'qty', fieldtype: 'Data' },
    { fieldname: 'code', fieldtype: 'Data' },
  ]);
  v2 = await generateVersion('v2', [
    { fieldname: 'qty', fieldtype: 'Int' },
    { fieldname: 'code', fieldtype: 'Data', unique: 1 },
  ]);
  const mysql = process.env.TEST_MYSQL_URL;
  if (mysql) {
    const name = `migrate_cli_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = knexFactory({ client: 'mysql2', connection: mysql });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.destroy();
    const u = new URL(mysql);
    u.pathname = `/${name}`;
    url = u.toString();
    knex = knexFactory({ client: 'mysql2', connection: url });
    dropDb = async () => {
      const k = knexFactory({ client: 'mysql2', connection: mysql });
      await k.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await k.destroy();
    };
  } else {
    url = `sqlite:${path.join(DIR, 'site.sqlite')}`;
    knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: path.join(DIR, 'site.sqlite') },
      useNullAsDefault: true,
    });
  }
}, 120_000);

afterAll(async () => {
  await knex?.destroy();
  await dropDb();
  rmSync(DIR, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function env(generated: string, site: Record<string, unknown> = {}) {
  const config = path.join(DIR, `site-${randomBytes(3).toString('hex')}.json`);
  writeFileSync(config, JSON.stringify({ job_worker: false, ...site }));
  return {
    ...process.env,
    SVC_GENERATED: generated,
    DATABASE_URL: url,
    SITE_CONFIG: config,
    PORT: '41150',
    LOG_LEVEL: 'warn',
  };
}

/** Runs `svc <args>` with the generated folder; waits for its exit. */
function svc(generated: string, args: string[], site: Record<string, unknown> = {}): Run {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'runtime/cli/main.ts', ...args], {
    cwd: ROOT,
    env: env(generated, site),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Starts `svc migrate` without waiting. */
function svcAsync(generated: string, args: string[]): Promise<Run> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'runtime/cli/main.ts', ...args], {
    cwd: ROOT,
    env: env(generated),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => proc.on('exit', (status) => resolve({ status, stdout, stderr })));
}

async function tableState() {
  const rows = await knex(TABLE).select().orderBy('name');
  const columns = await knex(TABLE).columnInfo();
  return createHash('sha1')
    .update(JSON.stringify([rows, columns]))
    .digest('hex');
}

const errorLines = (text: string) => text.split('\n').filter((l) => l.trim() && !l.startsWith('{'));

test('an unknown flag is a usage error (exit 2) and changes nothing', () => {
  const run = svc(v1, ['migrate', '--dryrun']);
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/^unknown option --dryrun\n\nUsage: svc migrate/);
}, 60_000);

test('refusals, dry run, two processes, history, auto_migrate, and the API after a type change', async () => {
  expect(svc(v1, ['migrate']).status).toBe(0);
  const stamp = '2026-01-01 00:00:00.000000';
  await knex(TABLE).insert(
    [
      ['W1', '12', 'S1'],
      ['W2', '42', 'S1'],
      ['W3', '5', 'S3'],
    ].map(([name, qty, code]) => ({
      name,
      title: name,
      qty,
      code,
      creation: stamp,
      modified: stamp,
      owner: 'Administrator',
      modified_by: 'Administrator',
    })),
  );
  const before = await tableState();

  // Refused: exit 1, the values named, nothing changed; the dry run says the same.
  const dry = svc(v2, ['migrate', '--dry-run']);
  expect(dry.status).toBe(1);
  expect(dry.stdout).toMatch(
    /^Mig Widget \| change_type \| qty: varchar\(140\) → \w+ \| (alter|create) table/m,
  );
  expect(dry.stdout).toMatch(
    /REFUSED: Mig Widget: cannot make code unique: 1 value is held by more than one document \("S1"\)/,
  );
  const refused = svc(v2, ['migrate']);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toBe(
    'Mig Widget: cannot make code unique: 1 value is held by more than one document ("S1")\n',
  );
  expect(await tableState()).toBe(before);

  // svc serve refuses to start: exit 1, the reason on one line, no stack.
  const serve = svc(v2, ['serve']);
  expect(serve.status).toBe(1);
  expect(errorLines(serve.stderr)).toEqual([
    'Mig Widget: cannot make code unique: 1 value is held by more than one document ("S1")',
  ]);
  expect(await tableState()).toBe(before);

  // auto_migrate false: a pending change stops the start, says to run svc migrate.
  await knex(TABLE).where({ name: 'W2' }).update({ code: 'S2' });
  const fixed = await tableState();
  const pending = svc(v2, ['serve'], { auto_migrate: false });
  expect(pending.status).toBe(1);
  expect(errorLines(pending.stderr)).toEqual([
    '2 schema changes are pending (Mig Widget) and auto_migrate is false: run `svc migrate`',
  ]);
  const dryOk = svc(v2, ['migrate', '--dry-run', '--json']);
  expect(dryOk.status).toBe(0);
  expect((JSON.parse(dryOk.stdout) as { kind: string }[]).map((c) => c.kind)).toEqual([
    'change_type',
    'add_index',
  ]);
  expect(await tableState()).toBe(fixed);

  // Two processes at once: one migrates, the other waits and finds nothing pending.
  const [a, b] = await Promise.all([svcAsync(v2, ['migrate']), svcAsync(v2, ['migrate'])]);
  expect([a.status, b.status]).toEqual([0, 0]);
  const history = (await knex('__SchemaMigration').where({ doctype: 'Mig Widget' }).select('kind')) as {
    kind: string;
  }[];
  expect(history.map((h) => h.kind).sort()).toEqual(['add_index', 'change_type', 'create_table']);
  expect([a.stdout, b.stdout].filter((o) => /migrated 1 DocTypes: Mig Widget/.test(o))).toHaveLength(1);
  const listed = svc(v2, ['migrate', '--history', '--json']);
  expect((JSON.parse(listed.stdout) as { kind: string }[]).some((r) => r.kind === 'change_type')).toBe(true);

  // The API after: the converted column filters and sorts as numbers.
  const registry = (require(path.join(v2, 'index.ts')) as { registry: Registry }).registry;
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: url,
      adminPassword: 'admin-test-password',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, job_worker: false },
      filesPath: path.join(DIR, 'files'),
    },
    registry,
  );
  try {
    const keys = await regenerateKeys(site.db.knex, 'Administrator');
    const http = request(createApp(site, { onServerError: () => undefined }).callback());
    const res = await http
      .get('/api/resource/Mig Widget')
      .query({
        fields: JSON.stringify(['name', 'qty']),
        filters: JSON.stringify([['qty', '>', 5]]),
        order_by: 'qty desc',
      })
      .set('Authorization', `token ${keys!.api_key}:${keys!.api_secret}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { name: 'W2', qty: 42 },
      { name: 'W1', qty: 12 },
    ]);
  } finally {
    await closeSite(site);
  }
}, 240_000);
