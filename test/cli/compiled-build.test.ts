// `npm run build`: the compiled JavaScript serves on its own, in one node process that can load neither tsx nor
// esbuild (a preload makes requiring them throw), from a working directory outside the package; it answers, creates,
// and stops on SIGTERM with exit code 0. `npm start`'s script runs it as one node process with its memory settings. The
// compiled generator writes what the sources' generator writes.
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { build } from '../../bin/build';
import { productionStart } from '../../bench/lib/service';
import { waitForPort } from '../helpers/private-mariadb';

const ROOT = path.resolve(__dirname, '../..');
// Another port for the MariaDB run, so the two suites can run at the same time.
// PORT and PORT + 2; no other test listens on 4725-4728.
const PORT = process.env.TEST_MYSQL_URL ? 4726 : 4725;
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

/** Collects a started child's output; `listening` resolves once it listens on `port`, or rejects with its output if it
 * exits first. */
function watchChild(proc: ChildProcessByStdio<null, Readable, Readable>, port: number) {
  let output = '';
  proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const listening = Promise.race([
    waitForPort(port, 60_000),
    exited.then((code) => {
      throw new Error(`exited ${code}: ${output}`);
    }),
  ]);
  return { exited, listening, output: () => output };
}

test('the build compiles every source file and copies the JSON beside them', async () => {
  const { compiled, copied } = await build(out);
  expect(compiled).toBeGreaterThan(200);
  expect(copied).toBeGreaterThan(10);
});

/** Every file under `root`, relative to it. */
const filesIn = (root: string, dir = ''): string[] =>
  readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesIn(root, path.join(dir, e.name)) : [path.join(dir, e.name)],
  );

test('node <dist>/generator/cli.js generates without tsx or esbuild: the same files as the sources', () => {
  const gen = path.join(dir, 'generated');
  const run = spawnSync(
    process.execPath,
    [
      '-r',
      path.join(dir, 'no-typescript.js'),
      path.join(out, 'generator/cli.js'),
      '--quiet',
      '--doctypes',
      'doctypes',
      '--out',
      gen,
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, JEST_WORKER_ID: '' } },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/^generated \d+ DocTypes: /);
  const files = filesIn(path.join(ROOT, 'generated')).sort();
  expect(filesIn(gen).sort()).toEqual(files);
  // index.ts imports the controllers by paths relative to the output folder; every other file is the same text.
  for (const file of files.filter((f) => f !== 'index.ts'))
    expect([file, readFileSync(path.join(gen, file), 'utf8')]).toEqual([
      file,
      readFileSync(path.join(ROOT, 'generated', file), 'utf8'),
    ]);
});

test('each compiled file names its source map beside it; the map points at the .ts file, without its text', () => {
  const js = readFileSync(path.join(out, 'runtime/config/config.js'), 'utf8');
  // No inline map: V8 keeps every module's source string, and an inline map tripled it.
  expect(js).not.toMatch(/sourceMappingURL=data:/);
  expect(js.trimEnd().endsWith('//# sourceMappingURL=config.js.map')).toBe(true);
  const map = JSON.parse(readFileSync(path.join(out, 'runtime/config/config.js.map'), 'utf8')) as {
    sources: string[];
    sourcesContent?: unknown;
  };
  expect(map.sourcesContent).toBeUndefined();
  expect(map.sources).toHaveLength(1);
  expect(path.resolve(path.join(out, 'runtime/config'), map.sources[0]!)).toBe(
    path.join(ROOT, 'runtime/config/config.ts'),
  );
  // With --enable-source-maps (npm start), a stack trace names the .ts file and its line.
  const thrown = spawnSync(
    process.execPath,
    [
      '--enable-source-maps',
      '-e',
      `try { require(${JSON.stringify(path.join(out, 'runtime/config/config.js'))}).loadSiteConfig('/nonexistent/site.json', true) } catch (e) { console.log(e.stack) }`,
    ],
    { encoding: 'utf8' },
  );
  const frame = /at .*loadSiteConfig \((.*):(\d+):\d+\)/.exec(thrown.stdout);
  expect(frame?.[1]).toBe(path.join(ROOT, 'runtime/config/config.ts'));
  expect(existsSync(frame![1]!)).toBe(true);
});

test('the runtime is one bundle whose modules are the ones required by their dist/ paths; the lazy ones stay outside', () => {
  const bundle = readFileSync(path.join(out, 'runtime.bundle.js'), 'utf8');
  expect(bundle.trimEnd().endsWith('//# sourceMappingURL=runtime.bundle.js.map')).toBe(true);
  const map = JSON.parse(readFileSync(path.join(out, 'runtime.bundle.js.map'), 'utf8')) as {
    sources: string[];
    sourcesContent?: unknown;
  };
  expect(map.sourcesContent).toBeUndefined();
  expect(map.sources.map((source) => path.resolve(out, source))).toContain(
    path.join(ROOT, 'runtime/config/config.ts'),
  );
  // The OAuth endpoints and the BullMQ queue are required inside functions: the bundle requires their compiled files.
  expect(bundle).toContain('require("./runtime/oauth/oauth-endpoints.js")');
  expect(bundle).not.toContain('require("@node-oauth/oauth2-server")');
  expect(bundle).not.toContain('require("bullmq")');
  const probe = `
    require(${JSON.stringify(path.join(out, 'runtime/cli/runtime-bundle.js'))}).installCompiledRuntimeBundle();
    const { modules } = require(${JSON.stringify(path.join(out, 'runtime.bundle.js'))});
    const config = require(${JSON.stringify(path.join(out, 'runtime/config/config.js'))});
    const endpoints = require(${JSON.stringify(path.join(out, 'runtime/oauth/oauth-endpoints.js'))});
    // A lazily required module gets the bundle's instances of what it imports.
    const errors = require.cache[${JSON.stringify(path.join(out, 'runtime/errors/errors.js'))}];
    console.log(JSON.stringify({
      same: config === modules['runtime/config/config.ts'],
      errors: errors.exports === modules['runtime/errors/errors.ts'],
      lazy: typeof endpoints === 'object' && !('runtime/oauth/oauth-endpoints.ts' in modules),
    }));
    try { config.loadSiteConfig('/nonexistent/site.json', true) } catch (e) { console.log(e.stack) }
  `;
  const run = spawnSync(process.execPath, ['--enable-source-maps', '-e', probe], { encoding: 'utf8' });
  expect(JSON.parse(run.stdout.split('\n')[0]!)).toEqual({ same: true, errors: true, lazy: true });
  // With --enable-source-maps (npm start), a stack trace through the bundle names the .ts file.
  const frame = /at .*loadSiteConfig \((.*):(\d+):\d+\)/.exec(run.stdout);
  expect(frame?.[1]).toBe(path.join(ROOT, 'runtime/config/config.ts'));
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
  const { exited, output, listening } = watchChild(proc, PORT);
  try {
    await listening;
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
    expect(output()).not.toMatch(/loaded (tsx|esbuild)/);
  } finally {
    proc.kill('SIGKILL');
  }
});

test('npm start (its script, run by sh as npm does) is one node process with the memory settings, and stops on SIGTERM', async () => {
  const port = PORT + 2;
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${path.join(site, 'start.sqlite')}`,
    FILES_PATH: path.join(site, 'files'),
    ADMIN_PASSWORD: 'compiled-admin-2',
    LOG_LEVEL: 'warn',
    JEST_WORKER_ID: '',
    // A value the caller sets wins over the script's default.
    MALLOC_ARENA_MAX: '3',
  };
  delete env.MALLOC_MMAP_THRESHOLD_;
  delete env.MALLOC_TRIM_THRESHOLD_;
  delete env.NODE_OPTIONS;
  // The build of the first test is `dist` in `dir`, where the script's relative path finds it.
  const proc = spawn('sh', ['-c', pkg.scripts.start!], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const { exited, listening } = watchChild(proc, port);
  try {
    await listening;
    // sh and env exec'd: the process spawned is node itself, with the flags and environment the bench reads.
    const cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const environ = readFileSync(`/proc/${proc.pid}/environ`, 'utf8').split('\0');
    const start = productionStart(ROOT, env);
    expect(path.basename(cmdline[0]!)).toBe('node');
    expect(cmdline.slice(1)).toEqual([...start.nodeArgs, 'dist/runtime/cli/main.js', 'serve']);
    expect(start.nodeArgs).toEqual(
      expect.arrayContaining(['--enable-source-maps', '--max-semi-space-size=8']),
    );
    expect(start.env.MALLOC_ARENA_MAX).toBe('3');
    for (const [name, value] of Object.entries(start.env)) expect(environ).toContain(`${name}=${value}`);
    expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
    expect((await fetch(`http://127.0.0.1:${port}/api/ready`)).status).toBe(200);
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    proc.kill('SIGKILL');
  }
});
