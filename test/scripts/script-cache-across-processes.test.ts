// The compiled-script cache across processes without REDIS_URL: two real `svc serve` processes on one database (MariaDB,
// or one SQLite file). A Server Script changed through B takes effect on A within CHECK_MS (the period at which a process
// without Redis checks the database's version of `tabServer Script`) plus slack, round after round: an API script's
// answer, and a DocType Event script run by a save on A.
import { callJson, startServePair, stopChildren, type SvcChild } from '../jobs/svc-child';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';
import { BOUND_MS, until } from './script-polling';

jest.setTimeout(120_000);
// Ports of their own (4850-4853), others for the MariaDB run so the two can run at once.
const BASE = DB_KIND === 'mysql' ? 4852 : 4850;
const ROUNDS = 3;

let t: TestSite;
let children: SvcChild[] = [];
let a: string;
let b: string;

const call = (url: string, init: RequestInit = {}) => callJson(url, t.adminToken, init);

beforeAll(async () => {
  t = await createTestSite();
  // No REDIS_URL (startSvc sets it empty): the processes learn of each other's changes from the database only.
  ({ a, b, children } = await startServePair(t, [BASE, BASE + 1]));
});
afterAll(async () => {
  await stopChildren(children);
  await t.close();
});

test(`an API script changed through B answers changed on A within ${BOUND_MS} ms, ${ROUNDS} rounds`, async () => {
  const saved = await call(`${b}/api/resource/Server Script`, {
    method: 'POST',
    body: JSON.stringify({
      name: 'across',
      script_type: 'API',
      api_method: 'across',
      script: "frappe.response.message = 'v0'",
    }),
  });
  expect(saved.status).toBe(201);
  const readA = async () => (await call(`${a}/api/method/across`)).body?.message;
  // A loads the scripts (the new one among them) and keeps them. Not bounded: A's first script also loads its sandbox.
  const first = await until(readA, 'v0');
  expect(first.last).toBe('v0');
  const took: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const put = await call(`${b}/api/resource/Server Script/across`, {
      method: 'PUT',
      body: JSON.stringify({ script: `frappe.response.message = 'v${round}'` }),
    });
    expect(put.status).toBe(200);
    const seen = await until(readA, `v${round}`);
    expect(seen.last).toBe(`v${round}`);
    took.push(seen.ms);
  }
  console.log(`${DB_KIND}: A answered the changed script after ${[first.ms, ...took].join(', ')} ms`);
  expect(Math.max(...took)).toBeLessThanOrEqual(BOUND_MS);
});

test(`a DocType Event script changed through B runs changed in A's next saves within ${BOUND_MS} ms`, async () => {
  const saved = await call(`${b}/api/resource/Server Script`, {
    method: 'POST',
    body: JSON.stringify({
      name: 'across-event',
      script_type: 'DocType Event',
      reference_doctype: 'ToDo',
      doctype_event: 'Before Save',
      script: "doc.description = 'e0'",
    }),
  });
  expect(saved.status).toBe(201);
  const saveOnA = async () => {
    const res = await call(`${a}/api/v2/document/ToDo`, {
      method: 'POST',
      body: JSON.stringify({ description: 'as sent', status: 'Open' }),
    });
    return res.body?.data?.description;
  };
  expect((await until(saveOnA, 'e0')).ms).toBeLessThanOrEqual(BOUND_MS);
  const put = await call(`${b}/api/resource/Server Script/across-event`, {
    method: 'PUT',
    body: JSON.stringify({ script: "doc.description = 'e1'" }),
  });
  expect(put.status).toBe(200);
  const seen = await until(saveOnA, 'e1');
  expect(seen.last).toBe('e1');
  expect(seen.ms).toBeLessThanOrEqual(BOUND_MS);
});
