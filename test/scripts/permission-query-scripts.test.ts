// Server Scripts of type Permission Query: `conditions` (a filter list, never SQL text) ANDed into every list and count
// of the reference DocType for users other than Administrator; a changed script takes effect at the next request.
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { saveScript } from './script-helpers';

let t: TestSite;
let alice: string;
beforeAll(async () => {
  t = await createTestSite();
  alice = await createUser(t, 'pq-alice@example.com', []);
  for (const [priority, n] of [
    ['High', 3],
    ['Low', 2],
  ] as const)
    for (let i = 0; i < n; i++)
      expect(
        (
          await t.http
            .post('/api/resource/ToDo')
            .set('Authorization', alice)
            .send({ description: `${priority} ${i}`, priority })
        ).status,
      ).toBe(201);
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const list = async (as: string, params = '') =>
  (
    await t.http
      .get(`/api/resource/ToDo?fields=["name","priority"]&limit_page_length=0${params}`)
      .set('Authorization', as)
  ).body.data as { priority: string }[];
const count = async (as: string) =>
  (await t.http.get('/api/v2/doctype/ToDo/count').set('Authorization', as)).body.data;

test('conditions restrict lists and counts of non-Administrators; Administrator sees everything', async () => {
  expect(await list(alice)).toHaveLength(5);
  const name = await saveScript(t, {
    script_type: 'Permission Query',
    reference_doctype: 'ToDo',
    script: "conditions = [['priority', '=', 'High'], ['owner', '=', frappe.session.user]]",
  });
  const rows = await list(alice);
  expect(rows).toHaveLength(3);
  expect(rows.every((r) => r.priority === 'High')).toBe(true);
  expect(await count(alice)).toBe(3);
  // ANDed with the user's own filters, not replacing them.
  expect(await list(alice, '&filters=[["priority","=","Low"]]')).toHaveLength(0);
  expect(await list(t.adminToken)).toHaveLength(5);
  expect(await count(t.adminToken)).toBe(5);
  // A changed script takes effect at the next request.
  await t.http
    .put(`/api/resource/Server Script/${name}`)
    .set(auth())
    .send({ script: "conditions = { priority: 'Low' }" });
  expect(await list(alice)).toHaveLength(2);
  expect(await count(alice)).toBe(2);
  await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 1 });
  expect(await list(alice)).toHaveLength(5);
});

test('SQL text, an unknown field or a failing script: 500 ServerScriptError, never an unrestricted list', async () => {
  const cases = [
    'conditions = "priority = \'High\' or 1=1"',
    "conditions = [['no_such_field', '=', 1]]",
    "conditions = [['priority', 'regexp', '.*']]",
    "frappe.throw('no lists today')",
    'while (true) {}',
  ];
  for (const script of cases) {
    const name = await saveScript(t, { script_type: 'Permission Query', reference_doctype: 'ToDo', script });
    const res = await t.http.get('/api/resource/ToDo').set('Authorization', alice);
    expect([script, res.status]).toEqual([script, script.startsWith('frappe.throw') ? 400 : 500]);
    expect(res.body.data).toBeUndefined();
    await t.http.put(`/api/resource/Server Script/${name}`).set(auth()).send({ disabled: 1 });
  }
  expect(await list(alice)).toHaveLength(5);
});

test('server_script_enabled: false: Permission Query scripts do not run', async () => {
  const off = await createTestSite({ site: { server_script_enabled: false } });
  try {
    const user = await createUser(off, 'pq-off@example.com', []);
    await off.http
      .post('/api/resource/ToDo')
      .set('Authorization', user)
      .send({ description: 'x', priority: 'Low' });
    await saveScript(off, {
      script_type: 'Permission Query',
      reference_doctype: 'ToDo',
      script: "conditions = { priority: 'High' }",
    });
    expect((await off.http.get('/api/resource/ToDo').set('Authorization', user)).body.data).toHaveLength(1);
  } finally {
    await off.close();
  }
});
