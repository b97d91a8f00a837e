// The start-up bundle's V8 code cache: made with the bundle, used by `svc`, and remade when it belongs to another bundle.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import { fileStamp } from '../../runtime/cli/bundle-code-cache';
import { ensureRegistryBundle } from '../../runtime/cli/registry-bundle';

const ROOT = path.resolve(__dirname, '../..');
let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(ROOT, 'test/tmp/code-cache-'));
  await runGenerator({ doctypes: ['doctypes'], out: dir, cwd: ROOT });
  bundle = (await ensureRegistryBundle(dir)) as string;
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first line of the cache file: the stamp of the bundle it was compiled from. */
const cacheStamp = () => readFileSync(`${bundle}.v8cache`, 'latin1').split('\n', 1)[0];

/** Runs `svc migrate` on a fresh SQLite file with the generated folder; returns its output. */
function migrate(): string {
  const db = path.join(dir, `db-${Date.now()}.sqlite`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'runtime/cli/main.ts', 'migrate'], {
    cwd: ROOT,
    env: { ...process.env, SVC_GENERATED: dir, DATABASE_URL: `sqlite:${db}`, SITE_CONFIG: '' },
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout;
}

test('building the bundle makes its code cache, stamped with the bundle', () => {
  expect(cacheStamp()).toBe(fileStamp(bundle));
});

test('svc loads the registry through the cache and keeps it', () => {
  const before = readFileSync(`${bundle}.v8cache`);
  expect(migrate()).toMatch(/^migrated \d+ DocTypes: .*ToDo/m);
  expect(readFileSync(`${bundle}.v8cache`).equals(before)).toBe(true);
}, 60_000);

test('a cache made from another bundle is not used: svc compiles the bundle and makes the cache again', () => {
  writeFileSync(
    `${bundle}.v8cache`,
    Buffer.concat([Buffer.from('1:2\n'), readFileSync(`${bundle}.v8cache`).subarray(100)]),
  );
  expect(migrate()).toMatch(/^migrated \d+ DocTypes: .*ToDo/m);
  expect(cacheStamp()).toBe(fileStamp(bundle));
}, 60_000);
