// Two real `svc serve` processes on one database: a write acknowledged by B is in the very next list, count and GET one A
// answers, round after round, while other clients keep A's remembered pages warm and its version reads busy (the race
// is between a read A began before the write and the request that follows the acknowledgement). On MariaDB with and
// without REDIS_URL (the machine's Redis at 127.0.0.1:6379; keys under the test database's own prefix), the same on
// PostgreSQL, on SQLite two processes on one file. The control: a write that bumps nothing (a connection the service
// does not own on MariaDB, the change triggers off on PostgreSQL), and A serves the page and document it remembered,
// which is what the check would see if writes stopped bumping the change counter.
import { callJson, startServePair, stopChildren, type ServePair } from '../jobs/svc-child';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';
import { HAS_CHANGE_COUNTER, unbumpedUpdate } from '../helpers/unbumped-write';

jest.setTimeout(300_000);
// Ports of their own (4790-4799): SQLite 4790-4791, MariaDB 4794-4797, PostgreSQL 4792-4793 and 4798-4799, so the
// runs can go at once.
const BASE = { sqlite: 4790, mysql: 4794, postgres: 4792 }[DB_KIND];
const ROUNDS = Number(process.env.FRESHNESS_ROUNDS ?? 300);
const HAMMERS = 3;

const fields = JSON.stringify(['name', 'description', 'status']);
const filters = JSON.stringify({ status: 'Open' });

let t: TestSite;
let x: string;
let y: string;

const call = (url: string, init: RequestInit = {}) => callJson(url, t.adminToken, init);

/** A's answer now: the description of x in the Open list (v1 or v2), the count of Open ToDos, and x read alone. */
async function readA(
  base: string,
  v1: boolean,
): Promise<{ description?: string; count: number; got: string; gotStatus: string }> {
  const q = `fields=${encodeURIComponent(fields)}&filters=${encodeURIComponent(filters)}&order_by=name%20asc`;
  const list = await call(v1 ? `${base}/api/resource/ToDo?${q}` : `${base}/api/v2/document/ToDo?${q}`);
  expect(list.status).toBe(200);
  const count = await call(
    v1
      ? `${base}/api/method/frappe.client.get_count?doctype=ToDo&filters=${encodeURIComponent(filters)}`
      : `${base}/api/v2/doctype/ToDo/count?filters=${encodeURIComponent(filters)}`,
  );
  expect(count.status).toBe(200);
  // x in one API version, y in the other.
  const one = await call(v1 ? `${base}/api/resource/ToDo/${x}` : `${base}/api/v2/document/ToDo/${x}`);
  const other = await call(v1 ? `${base}/api/v2/document/ToDo/${y}` : `${base}/api/resource/ToDo/${y}`);
  expect([one.status, other.status]).toEqual([200, 200]);
  const row = (list.body.data as { name: string; description: string }[]).find((r) => r.name === x);
  return {
    ...(row ? { description: row.description } : {}),
    count: count.body.data ?? count.body.message,
    got: (one.body.data as { description: string }).description,
    gotStatus: (other.body.data as { status: string }).status,
  };
}

beforeAll(async () => {
  t = await createTestSite();
  const names: string[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await t.http
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({
        description: `todo ${i}`,
        status: 'Open',
      });
    expect(res.status).toBe(201);
    names.push(res.body.data.name as string);
  }
  [x, y] = names as [string, string];
});
afterAll(() => t.close());

const variants: [string, string, number][] =
  DB_KIND === 'mysql'
    ? [
        ['MariaDB, change counter', '', 0],
        ['MariaDB, Redis notices', 'redis://127.0.0.1:6379', 2],
      ]
    : DB_KIND === 'postgres'
      ? [
          ['PostgreSQL, change counter', '', 0],
          ['PostgreSQL, Redis notices', 'redis://127.0.0.1:6379', 6],
        ]
      : [['SQLite', '', 0]];

describe.each(variants)('%s', (_label, redisUrl, offset) => {
  let pair: ServePair;
  beforeAll(async () => {
    pair = await startServePair(t, [BASE + offset, BASE + offset + 1], { REDIS_URL: redisUrl });
  });
  afterAll(() => stopChildren(pair.children));

  test(`a write acknowledged by B is in A's next list and count (${ROUNDS} rounds, reads beside)`, async () => {
    let stop = false;
    const hammers = Array.from({ length: HAMMERS }, async (_, i) => {
      while (!stop) await readA(pair.a, i % 2 === 0);
    });
    const stale: string[] = [];
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const description = `${redisUrl ? 'redis' : 'counter'} round ${round}`;
        const open = round % 2 === 0;
        // Warm A with the page and count as they are, then write through B.
        await readA(pair.a, round % 3 === 0);
        const put = await call(`${pair.b}/api/v2/document/ToDo/${x}`, {
          method: 'PUT',
          body: JSON.stringify({ description }),
        });
        expect(put.status).toBe(200);
        const toggled = await call(`${pair.b}/api/v2/document/ToDo/${y}`, {
          method: 'PUT',
          body: JSON.stringify({ status: open ? 'Closed' : 'Open' }),
        });
        expect(toggled.status).toBe(200);
        const seen = await readA(pair.a, round % 2 === 1);
        const want = {
          description,
          count: open ? 5 : 6,
          got: description,
          gotStatus: open ? 'Closed' : 'Open',
        };
        if (
          seen.description !== want.description ||
          seen.count !== want.count ||
          seen.got !== want.got ||
          seen.gotStatus !== want.gotStatus
        )
          stale.push(`round ${round}: ${JSON.stringify(seen)}, want ${JSON.stringify(want)}`);
      }
    } finally {
      stop = true;
      await Promise.all(hammers);
    }
    expect(stale).toEqual([]);
  });

  (HAS_CHANGE_COUNTER ? test : test.skip)(
    'control: a write that bumps nothing is not seen by A',
    async () => {
      const before = await readA(pair.a, false);
      await unbumpedUpdate(t.site.config.databaseUrl!, 'tabToDo', x, { description: 'behind its back' });
      expect(await readA(pair.a, false)).toEqual(before);
      // The same write through B is seen.
      const put = await call(`${pair.b}/api/v2/document/ToDo/${x}`, {
        method: 'PUT',
        body: JSON.stringify({ description: 'through B' }),
      });
      expect(put.status).toBe(200);
      const after = await readA(pair.a, false);
      expect([after.description, after.got]).toEqual(['through B', 'through B']);
    },
  );
});
