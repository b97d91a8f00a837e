// List restriction providers: what a provider registered on the site returns is ANDed into every list and count of the
// DocType for users other than Administrator, providers in registration order, synchronous or not; a provider that
// throws fails the list with its error.
import { addListRestriction } from '../../runtime/permissions/list-restrictions';
import { ServerScriptError } from '../../runtime/errors/errors';
import { cond } from '../../runtime/query/filter-tree';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let lister: string;
const asked: string[] = [];
let failing = false;

beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  lister = await createUser(t, 'lister@example.com', ['System Manager']);
  for (const [title, qty] of [
    ['red one', 1],
    ['red two', 2],
    ['blue two', 2],
  ] as const)
    await t.http
      .post('/api/resource/Widget')
      .set('Authorization', t.adminToken)
      .send({ title, qty })
      .expect(201);
  addListRestriction(t.site, (_site, user, binding) => {
    asked.push(`sync ${binding.meta.name} ${user.name}`);
    return binding.meta.name === 'Widget' ? cond('title', 'like', 'red%') : undefined;
  });
  addListRestriction(t.site, async (_site, _user, binding) => {
    await new Promise((resolve) => setImmediate(resolve));
    asked.push(`async ${binding.meta.name}`);
    if (failing) throw new ServerScriptError('provider broke');
    return binding.meta.name === 'Widget' ? cond('qty', '>', 1) : undefined;
  });
});
afterAll(() => t.close());
beforeEach(() => {
  asked.length = 0;
  failing = false;
});

const titles = (rows: { title: string }[]) => rows.map((r) => r.title).sort();

test('both providers narrow the list and the count (ANDed), asked in registration order', async () => {
  const list = await t.http
    .get('/api/resource/Widget')
    .query({ fields: JSON.stringify(['title']), limit_page_length: 0 })
    .set('Authorization', lister)
    .expect(200);
  expect(titles(list.body.data)).toEqual(['red two']);
  expect(asked.slice(0, 2)).toEqual(['sync Widget lister@example.com', 'async Widget']);
  const count = await t.http
    .post('/api/method/frappe.client.get_count')
    .set('Authorization', lister)
    .send({ doctype: 'Widget' })
    .expect(200);
  expect(count.body.message).toBe(1);
});

test('Administrator is not restricted, and the providers are not asked', async () => {
  const list = await t.http
    .get('/api/resource/Widget')
    .query({ fields: JSON.stringify(['title']), limit_page_length: 0 })
    .set('Authorization', t.adminToken)
    .expect(200);
  expect(titles(list.body.data)).toEqual(expect.arrayContaining(['blue two', 'red one', 'red two']));
  expect(asked).toEqual([]);
});

test('a throwing provider fails the list with its error (never a list without the restriction)', async () => {
  failing = true;
  const res = await t.http.get('/api/resource/Widget').set('Authorization', lister);
  expect(res.status).toBe(500);
  expect(res.body.exc_type).toBe('ServerScriptError');
});
