// Behind another process's SQLite write lock, concurrent writes each answer 503 within db_busy_timeout of their own
// arrival (they used to queue: 503 after one, two, three… timeouts, with the event loop blocked in SQLite's busy
// handler), ping and reads answer meanwhile, and writes succeed once the lock is released.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const BUSY_MS = 1500;
/** Scheduling slack on a loaded 2-core machine. */
const SLACK_MS = 1000;
/** The slowest ping allowed while the writes wait (each used to block the event loop for BUSY_MS). */
const PING_MS = 1000;

const run = DB_KIND === 'sqlite' ? describe : describe.skip;

/** A node process that holds SQLite's write lock (BEGIN IMMEDIATE) on `file` until it reads a line. */
async function holdWriteLock(file: string): Promise<{ release(): Promise<void> }> {
  const source = `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
  `;
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', source]);
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return {
    async release() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.write('release\n');
      await exited;
    },
  };
}

run('SQLite writes behind another process write lock', () => {
  let t: TestSite;
  let todo: string;

  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: BUSY_MS } });
    const res = await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'before the lock' });
    todo = res.body.data.name;
  });
  afterAll(() => t.close());

  test('each write answers 503 within db_busy_timeout; ping and reads answer meanwhile; writes pass after', async () => {
    const file = (t.site.config.databaseUrl as string).replace(/^sqlite:/, '');
    const lock = await holdWriteLock(file);
    let released = false;
    try {
      const pings: number[] = [];
      let waiting = true;
      const pinging = (async () => {
        while (waiting) {
          const started = Date.now();
          expect((await t.http.get('/api/method/ping')).status).toBe(200);
          pings.push(Date.now() - started);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const started = Date.now();
      const writes = await Promise.all(
        Array.from({ length: 9 }, async (_, i) => {
          const res =
            i === 8
              ? // A login writes its session row through the site's knex, not the group commit.
                await t.http
                  .post('/api/method/login')
                  .send({ usr: 'Administrator', pwd: 'admin-test-password' })
              : i % 2 === 0
                ? await t.http
                    .post('/api/resource/ToDo')
                    .set('Authorization', t.adminToken)
                    .send({ description: `under the lock ${i}` })
                : await t.http
                    .put(`/api/resource/ToDo/${todo}`)
                    .set('Authorization', t.adminToken)
                    .send({ description: `under the lock ${i}` });
          return {
            status: res.status,
            excType: res.body.exc_type,
            retryAfter: res.headers['retry-after'],
            ms: Date.now() - started,
          };
        }),
      );
      const read = await t.http.get(`/api/resource/ToDo/${todo}`).set('Authorization', t.adminToken);
      waiting = false;
      await pinging;
      console.log(
        'writes under the lock, ms:',
        writes.map((w) => w.ms),
        `pings: ${pings.length}, slowest ${Math.max(...pings)} ms`,
      );
      for (const w of writes) {
        expect(w).toMatchObject({ status: 503, excType: 'ServiceUnavailableError' });
        expect(Number(w.retryAfter)).toBeGreaterThan(0);
        expect(w.ms).toBeLessThan(BUSY_MS + SLACK_MS);
      }
      expect(read.status).toBe(200);
      expect(pings.length).toBeGreaterThanOrEqual(5);
      expect(Math.max(...pings)).toBeLessThan(PING_MS);
      await lock.release();
      released = true;
    } finally {
      if (!released) await lock.release();
    }
    const created = await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'after the lock' });
    expect(created.status).toBe(201);
    const updated = await t.http
      .put(`/api/resource/ToDo/${todo}`)
      .set('Authorization', t.adminToken)
      .send({ description: 'after the lock, changed' });
    expect(updated.status).toBe(200);
    // Nothing of the refused writes was kept.
    const kept = await t.site.db
      .knex('tabToDo')
      .where('description', 'like', 'under the lock%')
      .count({ n: '*' });
    expect(Number(kept[0]?.n)).toBe(0);
  });
});
