// `svc migrate` with patches.txt (SVC_ROOT): a failing patch exits 1 with one line naming the patch and its error, no
// stack trace, and runs again on the next `svc migrate`, which then exits 0 and says what ran. Two processes starting
// together run a patch once (it runs under the migration lock); with auto_migrate false a pending patch stops
// `svc serve` as a pending schema change does, and the dry run lists it. SQLite, MariaDB with TEST_MYSQL_URL or
// PostgreSQL with TEST_POSTGRES_URL.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { patchProject } from '../helpers/patch-project';

const ROOT = path.resolve(__dirname, '../..');
const project = patchProject();
const database = path.join(
  ROOT,
  'test/tmp',
  `cli_patches_${process.pid}_${randomBytes(4).toString('hex')}.sqlite`,
);
const mysql = process.env.TEST_MYSQL_URL;
const postgres = process.env.TEST_POSTGRES_URL;
const serverUrl = mysql ?? postgres;
const serverName = `cli_patches_${process.pid}_${randomBytes(3).toString('hex')}`;
/** The database the processes migrate: a SQLite file, or a MariaDB or PostgreSQL database of its own. */
const databaseUrl = (() => {
  if (!serverUrl) return `sqlite:${database}`;
  const u = new URL(serverUrl);
  u.pathname = `/${serverName}`;
  return u.toString();
})();

/** Runs one statement on the test database server. */
async function onServer(sql: string): Promise<void> {
  const admin = knexFactory({ client: mysql ? 'mysql2' : 'pg', connection: serverUrl });
  try {
    await admin.raw(sql);
  } finally {
    await admin.destroy();
  }
}

beforeAll(async () => {
  if (mysql)
    await onServer(`CREATE DATABASE \`${serverName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  else if (postgres) await onServer(`CREATE DATABASE "${serverName}"`);
});
afterAll(async () => {
  project.remove();
  for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(database + ext, { force: true });
  if (mysql) await onServer(`DROP DATABASE IF EXISTS \`${serverName}\``);
  else if (postgres) await onServer(`DROP DATABASE IF EXISTS "${serverName}" WITH (FORCE)`);
});

/** Runs `svc <args>` (default `migrate`) on the test database with the project's patches. */
function svcMigrate(
  args: string[] = ['migrate'],
  site: Record<string, unknown> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const config = path.join(project.root, `site-${randomBytes(3).toString('hex')}.json`);
  writeFileSync(config, JSON.stringify({ job_worker: false, ...site }));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.js', ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        SVC_ROOT: project.root,
        SITE_CONFIG: config,
        PORT: '4831',
        LOG_LEVEL: 'silent',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

test('a new site records its patches as done without running them (a failing one included)', async () => {
  const trace = path.join(project.root, 'new-site-runs.txt');
  writeFileSync(trace, '');
  project.list('[post_model_sync]\npatches.cli.installed\n');
  project.patch(
    'patches.cli.installed',
    `import { appendFileSync } from 'node:fs';
export function execute(): void {
  appendFileSync(${JSON.stringify(trace)}, 'ran\\n');
  throw new Error('never runs on a new site');
}
`,
  );
  const made = await svcMigrate();
  expect([made.status, made.stderr]).toEqual([0, '']);
  expect(readFileSync(trace, 'utf8')).toBe('');
});

test('a failing patch exits 1 with one line; fixed, the next svc migrate runs it and exits 0', async () => {
  project.list('[post_model_sync]\npatches.cli.boom\n');
  project.patch(
    'patches.cli.boom',
    "export function execute(): void {\n  throw new Error('not today');\n}\n",
  );
  const failed = await svcMigrate();
  expect(failed.status).toBe(1);
  expect(failed.stderr.trim().split('\n')).toEqual([
    'patch patches.cli.boom (patches.txt:2) failed: not today',
  ]);

  project.patch('patches.cli.boom', 'export function execute(): void {}\n');
  const fixed = await svcMigrate();
  expect(fixed.stderr).toBe('');
  expect(fixed.status).toBe(0);
  expect(fixed.stdout).toContain('ran 1 patches: patches.cli.boom');
});

test('two svc migrate processes starting together run a slow patch once', async () => {
  const trace = path.join(project.root, 'slow-runs.txt');
  writeFileSync(trace, '');
  // The patch notes each run as it starts, then takes 3 s: without the lock the second process would read an empty
  // Patch Log meanwhile and run it again. The wait for the lock outlasts db_statement_timeout (1 s here), which bounds
  // requests, not it.
  project.patch(
    'patches.cli.slow',
    `import { appendFileSync } from 'node:fs';
export async function execute(): Promise<void> {
  appendFileSync(${JSON.stringify(trace)}, process.pid + '\\n');
  await new Promise((resolve) => setTimeout(resolve, 3000));
}
`,
  );
  project.list('[post_model_sync]\npatches.cli.boom\n[pre_model_sync]\npatches.cli.slow\n');
  const limited = { db_statement_timeout: 1000 };
  const [a, b] = await Promise.all([svcMigrate(['migrate'], limited), svcMigrate(['migrate'], limited)]);
  expect([a.status, b.status, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
  expect(readFileSync(trace, 'utf8').trim().split('\n')).toHaveLength(1);
  expect([a.stdout, b.stdout].filter((o) => o.includes('ran 1 patches: patches.cli.slow'))).toHaveLength(1);
}, 120_000);

test('auto_migrate false: a pending patch stops svc serve (one line, exit 1) and does not run', async () => {
  const trace = path.join(project.root, 'late-runs.txt');
  writeFileSync(trace, '');
  project.patch(
    'patches.cli.late',
    `import { appendFileSync } from 'node:fs';
export function execute(): void {
  appendFileSync(${JSON.stringify(trace)}, 'ran\\n');
}
`,
  );
  project.list('[pre_model_sync]\npatches.cli.slow\n[post_model_sync]\npatches.cli.boom\npatches.cli.late\n');
  const served = await svcMigrate(['serve'], { auto_migrate: false });
  expect(served.status).toBe(1);
  expect(served.stderr.trim().split('\n')).toEqual([
    '1 patch is pending (patches.cli.late) and auto_migrate is false: run `svc migrate`',
  ]);
  expect(readFileSync(trace, 'utf8')).toBe('');

  const dry = await svcMigrate(['migrate', '--dry-run']);
  expect(dry.status).toBe(0);
  expect(dry.stdout).toContain('patch | pending | patches.cli.late\n');
  expect(dry.stdout).toContain('1 change pending');
  expect(readFileSync(trace, 'utf8')).toBe('');

  // A pending line whose module is missing: the dry run says what the run would stop on, and exits 1 as it would.
  project.list('[post_model_sync]\npatches.cli.late\npatches.cli.nope\n');
  const missing = await svcMigrate(['migrate', '--dry-run']);
  expect(missing.status).toBe(1);
  expect(missing.stdout).toContain('patch | pending | patches.cli.nope\n');
  expect(missing.stderr).toMatch(/^patches\.txt:3 patches\.cli\.nope: no file patches\/cli\/nope\.ts/);
  project.list('[post_model_sync]\npatches.cli.late\n');

  expect((await svcMigrate()).status).toBe(0);
  expect(readFileSync(trace, 'utf8')).toBe('ran\n');
}, 120_000);
