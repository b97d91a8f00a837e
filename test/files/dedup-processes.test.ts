// Identical content is stored once also when two processes share one FILES_PATH: two real `svc serve` children on
// the same database and store take concurrent uploads of the same bytes; the file system (link() never replaces a
// file) decides which one stores them. Deleting every File from both processes at once leaves no bytes behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { waitForPort } from '../helpers/private-mariadb';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';
import { filesRoot, storedNames } from './file-helpers';

const ROOT = path.resolve(__dirname, '../..');
// Ports of their own (4760-4763), others for the MariaDB run so the two suites can run at once.
const PORTS = DB_KIND === 'mysql' ? [4762, 4763] : [4760, 4761];
jest.setTimeout(180_000);

let t: TestSite;
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await createTestSite();
  for (const port of PORTS)
    children.push(
      spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'serve'], {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URL: t.site.config.databaseUrl,
          FILES_PATH: filesRoot(t),
          ADMIN_PASSWORD: 'admin-test-password',
          REDIS_URL: '',
          LOG_LEVEL: 'warn',
          JEST_WORKER_ID: '',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
  await Promise.all(PORTS.map((port) => waitForPort(port, 90_000)));
});

afterAll(async () => {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }),
  );
  await t?.close();
});

/** Uploads `bytes` as `fileName` to the child on `port`; the File document. */
async function uploadTo(port: number, bytes: Buffer, fileName: string): Promise<Record<string, unknown>> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), fileName);
  const res = await fetch(`http://127.0.0.1:${port}/api/method/upload_file`, {
    method: 'POST',
    headers: { Authorization: t.adminToken },
    body: form,
  });
  const body = (await res.json()) as { message: Record<string, unknown> };
  expect(res.status).toBe(200);
  return body.message;
}

/** The distinct files (inodes) of the public area whose bytes are `bytes`. */
function copiesOf(bytes: Buffer): Set<string> {
  const dir = path.join(filesRoot(t), 'files');
  const inodes = new Set<string>();
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (readFileSync(file).equals(bytes)) inodes.add(String(statSync(file).ino));
  }
  return inodes;
}

test.each([
  ['the same name', (_i: number) => 'shared.bin'],
  ['different names', (i: number) => `part-${i}.bin`],
])(
  '20 concurrent uploads of the same bytes to two processes (%s): 20 File rows, one stored copy',
  async (_what, nameOf) => {
    const bytes = randomBytes(256 * 1024);
    const docs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => uploadTo(PORTS[i % 2] as number, bytes, nameOf(i))),
    );
    const hash = docs[0]?.content_hash as string;
    expect(new Set(docs.map((d) => d.content_hash))).toEqual(new Set([hash]));
    const rows = await t.site.db.knex('tabFile').where('content_hash', hash).select('name', 'file_url');
    expect(rows).toHaveLength(20);
    expect(copiesOf(bytes).size).toBe(1);
    expect(readdirSync(path.join(filesRoot(t), 'blobs'))).toContain(hash);
    expect(storedNames(t, 'tmp/uploads')).toEqual([]);
    for (const row of rows) {
      const res = await fetch(`http://127.0.0.1:${PORTS[0]}${row.file_url as string}`);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    }

    // Every File deleted at once, half through each process: the bytes go with the last one, nothing is left.
    const deleted = await Promise.all(
      rows.map((row, i) =>
        fetch(`http://127.0.0.1:${PORTS[i % 2]}/api/resource/File/${row.name as string}`, {
          method: 'DELETE',
          headers: { Authorization: t.adminToken },
        }),
      ),
    );
    expect(deleted.map((r) => r.status)).toEqual(rows.map(() => 202));
    // The bytes are removed after each commit: wait until the last removal has run.
    for (let i = 0; i < 100 && copiesOf(bytes).size > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(copiesOf(bytes).size).toBe(0);
    expect(readdirSync(path.join(filesRoot(t), 'blobs'))).not.toContain(hash);
    expect(storedNames(t, 'tmp/uploads')).toEqual([]);
  },
);

test('an upload racing the deletion of the last File with its bytes (two processes) keeps its bytes', async () => {
  for (let round = 0; round < 5; round++) {
    const bytes = randomBytes(32 * 1024);
    const first = await uploadTo(PORTS[0] as number, bytes, `race-${round}.bin`);
    const [, again] = await Promise.all([
      fetch(`http://127.0.0.1:${PORTS[0]}/api/resource/File/${first.name as string}`, {
        method: 'DELETE',
        headers: { Authorization: t.adminToken },
      }),
      uploadTo(PORTS[1] as number, bytes, `race-${round}.bin`),
    ]);
    // The second File's bytes are there whichever came first, and stay there once the deletion has finished.
    await new Promise((r) => setTimeout(r, 300));
    const res = await fetch(`http://127.0.0.1:${PORTS[1]}${again.file_url as string}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  }
});
