// A process holds only the libraries it uses: a site without Redis, BullMQ, OAuth traffic or schedules serves requests
// (creating its database, signing key included) without loading ioredis, BullMQ, the OAuth library, jose or
// cron-parser, which together cost tens of MB of memory (#17's RSS target), nor koa-body and the zod it validates its
// options with (3 MB of heap: loaded by the first form, chunked or compressed body), nor rate-limiter-flexible (methods without a
// rate limit), nor what import and export read and write XLSX with (exceljs, with jszip and unzipper, and archiver: 14
// MB of heap), undici (webhook deliveries) or pg on a SQLite site. A real `svc serve` child reports the
// packages in its require cache after serving. It loads runtime/ file by file, as the compiled build (`npm start`)
// does: SVC_BUNDLE=0 turns off the development bundle, which loads every runtime module at once to start faster. The
// compiled build bundles the runtime too, but leaves out the modules only required inside functions: it is run as well.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from '../../bin/build';

const ROOT = path.join(__dirname, '..', '..');
const HEAVY = [
  'ioredis',
  'bullmq',
  '@node-oauth/oauth2-server',
  'jose',
  'cron-parser',
  'luxon',
  'koa-body',
  'zod',
  'exceljs',
  'jszip',
  'unzipper',
  'archiver',
  'undici',
  'pg',
];

// The child runs the CLI at `main`, serves, answers one request, then prints the packages it has loaded and exits.
const child = (main: string) => `
const { main } = require(${JSON.stringify(main)});
const log = console.log;
console.log = (line, ...rest) => {
  log(line, ...rest);
  const m = /^serving .* on (http:\\/\\/\\S+)/.exec(String(line));
  if (!m) return;
  fetch(m[1] + '/api/resource/ToDo?limit=1', { headers: { authorization: 'token nobody:nothing' } })
    .then((res) => res.text())
    .then(() => {
      const packages = new Set();
      for (const file of Object.keys(require.cache)) {
        const hit = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file);
        if (hit) packages.add(hit[1]);
      }
      log('LOADED ' + JSON.stringify([...packages]));
      process.exit(0);
    });
};
main(['serve']);
`;

/** A port nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'svc-lazy-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs the child with the CLI at `main` (through tsx when `tsx`, then without the development bundle) and returns the
 * packages it loaded.
 */
async function loadedPackages(main: string, tsx: boolean): Promise<string[]> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `sqlite:${path.join(dir, 'site.sqlite')}`,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: 'lazy-test-pw',
  };
  if (tsx) env.SVC_BUNDLE = '0';
  else delete env.SVC_BUNDLE;
  delete env.REDIS_URL;
  delete env.SITE_CONFIG;
  const proc = spawn(process.execPath, [...(tsx ? ['--import', 'tsx'] : []), '-e', child(main)], {
    cwd: ROOT,
    env,
  });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`the child printed no LOADED line (exit ${code}):\n${out}`);
  return JSON.parse(line.slice('LOADED '.length)) as string[];
}

test('a new site serving requests without Redis, jobs on BullMQ, OAuth or schedules loads none of their libraries', async () => {
  const loaded = await loadedPackages(path.join(ROOT, 'runtime/cli/main.ts'), true);
  // The check means something: the child did load its libraries (knex and the SQLite driver among them).
  expect(loaded).toEqual(expect.arrayContaining(['knex', 'better-sqlite3', 'koa']));
  expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
}, 60000);

test('the same with the compiled build, whose runtime is one bundle', async () => {
  // Inside the package, whose node_modules the compiled files require.
  const out = path.join(ROOT, 'test/tmp', `lazy-dist-${process.pid}`);
  await build(out);
  const loaded = await loadedPackages(path.join(out, 'runtime/cli/main.js'), false);
  expect(loaded).toEqual(expect.arrayContaining(['knex', 'better-sqlite3', 'koa']));
  expect(loaded).not.toContain('tsx');
  expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
  rmSync(out, { recursive: true, force: true });
}, 60000);
