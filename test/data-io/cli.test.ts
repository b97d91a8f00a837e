// `svc import` and `svc export` (issue 35): a real process on a SQLite site, the progress bar on stderr, the file on
// stdout, failed lines listed and a non-zero exit when a document fails.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const dir = path.join(ROOT, 'test/tmp', `cli-data-${process.pid}`);
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${path.join(dir, 'site.sqlite')}`,
  SITE_CONFIG: '',
  FILES_PATH: dir,
  ADMIN_PASSWORD: 'x-admin-1',
};
// LOG_LEVEL info, as a user's shell has it (jest workers are silent): log lines must not reach the exported data.
const svc = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'runtime/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...env, LOG_LEVEL: 'info' },
    encoding: 'utf8',
  });

beforeAll(() => mkdirSync(dir, { recursive: true }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('svc import, then svc export: the same documents, a progress bar on stderr', () => {
  const file = path.join(dir, 'todos.csv');
  writeFileSync(
    file,
    `description,priority\n${Array.from({ length: 300 }, (_, i) => `cli-${i},High`).join('\n')}\n`,
  );
  const imported = svc('import', file, '--doctype', 'ToDo');
  expect(imported.stderr).toMatch(/\[#{30}\] 100% 300\/300 ToDo/);
  expect(imported.stderr).toMatch(/300 of 300 documents imported/);
  expect(imported.status).toBe(0);
  const exported = svc(
    'export',
    '--doctype',
    'ToDo',
    '--fields',
    '["description","priority"]',
    '--order-by',
    'description asc',
  );
  expect(exported.status).toBe(0);
  expect(exported.stderr).toMatch(/100% 300\/300 ToDo/);
  expect(exported.stderr).toMatch(/"event":"export"/);
  expect(exported.stdout.startsWith('\ufeffdescription,priority\n')).toBe(true);
  const lines = exported.stdout
    .replace(/^\ufeff/, '')
    .trim()
    .split('\n');
  expect(lines[0]).toBe('description,priority');
  expect(lines.slice(1).sort()).toEqual(Array.from({ length: 300 }, (_, i) => `cli-${i},High`).sort());
}, 120_000);

test('svc import lists failed lines and exits 1; a bad file is one clear line', () => {
  const file = path.join(dir, 'bad.csv');
  writeFileSync(file, 'description,status\nfine,Open\nwrong,Nope\n');
  const run = svc('import', file, '--doctype', 'ToDo');
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(/1 of 2 documents imported/);
  expect(run.stderr).toMatch(/lines 3: \w+Error: /);
  writeFileSync(file, 'nope\nx\n');
  const refused = svc('import', file, '--doctype', 'ToDo');
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/DataError: Unknown columns for ToDo: "nope"/);
}, 120_000);
