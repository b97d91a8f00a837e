// With REDIS_URL, a User Permission written or deleted through one process reaches every process at once: a second,
// real server process (`node bin/svc.js serve` on the same database and Redis) restricts the user's reads as soon as
// the notice arrives (milliseconds after the write answers on the first), not after its 5 s cache expires. The notice
// travels on its own connection, so B may take a read or two before it: the reads are polled for up to 3 s (room for
// a loaded machine), still well before B's cache, filled just before the write, expires.
import { startSvc, stopChildren, type SvcChild } from '../jobs/svc-child';
import { waitForPort } from '../helpers/private-mariadb';
import { DB_KIND, createTestSite, createUser, type TestSite } from '../helpers/test-site';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/12';
// A port per database, so the three runs can go at once.
const PORT = { sqlite: 4866, mysql: 4867, postgres: 4868 }[DB_KIND];
const USER = 'user-permission-broadcast@example.com';
jest.setTimeout(120_000);

let t: TestSite;
let children: SvcChild[] = [];
let userToken: string;
let todos: string[];
const b = `http://127.0.0.1:${PORT}`;

beforeAll(async () => {
  t = await createTestSite({ redisUrl: REDIS_URL });
  userToken = await createUser(t, USER, ['System Manager']);
  todos = [];
  for (const description of ['first', 'second']) {
    const res = await t.http
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description, status: 'Open' });
    expect(res.status).toBe(201);
    todos.push(res.body.data.name);
  }
  children = [
    startSvc(t, ['serve'], { job_worker: false }, { PORT: String(PORT), HOST: '127.0.0.1', REDIS_URL }),
  ];
  await waitForPort(PORT, 60_000);
});
afterAll(async () => {
  await stopChildren(children);
  await t.close();
});

/** The ToDo names the user reads on B. */
async function namesOnB(): Promise<string[]> {
  const res = await fetch(`${b}/api/resource/ToDo?limit_page_length=0`, {
    headers: { Authorization: userToken },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { name: string }[] };
  return body.data.map((row) => row.name).sort();
}

/** B's names for the user, polled until they are `expected` or 3 s have passed (well under the 5 s cache). */
async function settlesOnB(expected: unknown[]): Promise<string[]> {
  const deadline = Date.now() + 3000;
  let got = await namesOnB();
  while (JSON.stringify(got) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    got = await namesOnB();
  }
  return got;
}

test('a User Permission written through A restricts B within 3 s (not its 5 s cache); deleted, B is free again', async () => {
  // B has the user's (empty) User Permissions cached.
  expect(await namesOnB()).toEqual([...todos].sort());
  const written = await t.http
    .post('/api/resource/User Permission')
    .set('Authorization', t.adminToken)
    .send({ user: USER, allow: 'ToDo', for_value: todos[0] });
  expect(written.status).toBe(201);
  expect(await settlesOnB([todos[0]])).toEqual([todos[0]]);

  const deleted = await t.http
    .delete(`/api/resource/User Permission/${written.body.data.name}`)
    .set('Authorization', t.adminToken);
  expect(deleted.status).toBe(202);
  expect(await settlesOnB([...todos].sort())).toEqual([...todos].sort());
});
