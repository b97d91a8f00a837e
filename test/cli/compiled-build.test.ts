// `npm run build`: the compiled JavaScript serves on its own, in one node process that can load neither tsx nor
// esbuild (a preload makes requiring them throw), from a working directory outside the package; it answers, creates,
// and stops on SIGTERM with exit code 0.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from '../../bin/build';
import { waitForPort } from '../helpers/private-mariadb';

const ROOT = path.resolve(__dirname, '../..');
// Another port for the MariaDB run, so the two suites can run at the same time.
const PORT = process.env.TEST_MYSQL_URL ? 4722 : 4721;
jest.setTimeout(120_000);

const dir = path.join(ROOT, 'test/tmp', `compiled-${process.pid}`);
const out = path.join(dir, 'dist');
const site = path.join(dir, 'site');

beforeAll(() => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(site, { recursive: true });
  // What a production process must never load: the TypeScript loader and the bundler.
  writeFileSync(
    path.join(dir, 'no-typescript.js'),
    `const Module = require('module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^(tsx|esbuild)(\\/|$)/.test(request)) throw new Error('loaded ' + request);
  return resolve.call(this, request, ...rest);
};
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the build compiles every source file and copies the JSON beside them', () => {
  const { compiled, copied } = build(out);
  expect(compiled).toBeGreaterThan(200);
  expect(copied).toBeGreaterThan(10);
});

test('node <dist>/runtime/cli/main.js serve runs without tsx or esbuild, answers, and stops on SIGTERM', async () => {
  const proc = spawn(
    process.execPath,
    ['-r', path.join(dir, 'no-typescript.js'), path.join(out, 'runtime/cli/main.js'), 'serve'],
    {
      cwd: site,
      env: {
        ...process.env,
        PORT: String(PORT),
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${path.join(site, 'site.sqlite')}`,
        FILES_PATH: path.join(site, 'files'),
        ADMIN_PASSWORD: 'compiled-admin-1',
        LOG_LEVEL: 'warn',
        JEST_WORKER_ID: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  try {
    await Promise.race([
      waitForPort(PORT, 60_000),
      exited.then((code) => {
        throw new Error(`exited ${code}: ${output}`);
      }),
    ]);
    const base = `http://127.0.0.1:${PORT}`;
    expect((await fetch(`${base}/api/ready`)).status).toBe(200);
    const login = await fetch(`${base}/api/method/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usr: 'Administrator', pwd: 'compiled-admin-1' }),
    });
    expect(login.status).toBe(200);
    const cookie = String(login.headers.get('set-cookie')).split(';')[0]!;
    const csrf = ((await login.json()) as { csrf_token: string }).csrf_token;
    const created = await fetch(`${base}/api/resource/ToDo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-frappe-csrf-token': csrf },
      body: JSON.stringify({ description: 'from the compiled build' }),
    });
    expect(created.status).toBe(201);
    // The OpenAPI documents come from the compiled generated folder (the working directory has none).
    const spec = await fetch(`${base}/api/v2/openapi.json`, { headers: { cookie } });
    expect(spec.status).toBe(200);
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toMatch(/loaded (tsx|esbuild)/);
  } finally {
    proc.kill('SIGKILL');
  }
});
