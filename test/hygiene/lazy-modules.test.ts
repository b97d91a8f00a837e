// A process holds only the libraries it uses: a site without Redis, BullMQ, OAuth traffic or schedules serves requests
// (creating its database, signing key included) without loading ioredis, BullMQ, the OAuth library, jose or
// cron-parser, which together cost tens of MB of memory (#17's RSS target). A real `svc serve` child reports the
// packages in its require cache after serving. It loads runtime/ file by file, as the compiled build (`npm start`)
// does: SVC_BUNDLE=0 turns off the development bundle, which loads every runtime module at once to start faster.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const HEAVY = ['ioredis', 'bullmq', '@node-oauth/oauth2-server', 'jose', 'cron-parser', 'luxon'];

// The child serves, answers one request, then prints the packages it has loaded and exits.
const CHILD = `
const { main } = require(${JSON.stringify(path.join(ROOT, 'runtime/cli/main.ts'))});
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

test('a new site serving requests without Redis, jobs on BullMQ, OAuth or schedules loads none of their libraries', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `sqlite:${path.join(dir, 'site.sqlite')}`,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: 'lazy-test-pw',
    SVC_BUNDLE: '0',
  };
  delete env.REDIS_URL;
  delete env.SITE_CONFIG;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', CHILD], { cwd: ROOT, env });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`the child printed no LOADED line (exit ${code}):\n${out}`);
  const loaded = JSON.parse(line.slice('LOADED '.length)) as string[];
  // The check means something: the child did load its libraries (knex and the SQLite driver among them).
  expect(loaded).toEqual(expect.arrayContaining(['knex', 'better-sqlite3', 'koa']));
  expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
}, 60000);
