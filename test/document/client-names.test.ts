// Client-supplied names on create: v2 uses them for every rule, v1 only for Prompt and UUID; bad and duplicate names are refused.
import { countRows } from '../api/api-version';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const RULES: [doctype: string, extra: object][] = [
  ['Named By Hash', {}],
  ['Named By Autoincrement', {}],
  ['Named By Field', { code: 'CODE-1' }],
  ['Named By Format', {}],
  ['Named By Series', {}],
  ['Named By Naming Series', { naming_series: 'SER-.####' }],
  ['Named By Prompt', {}],
  ['Named By UUID', {}],
  ['Widget', { title: 'auto:ignored-when-named' }],
];

const post = (path: string, body: object) => t.http.post(path).set('Authorization', t.adminToken).send(body);

test.each(RULES)('v2 uses the client name as given for %s', async (doctype, extra) => {
  const res = await post(`/api/v2/document/${doctype}`, { title: 't', ...extra, name: `client ${doctype}` });
  expect(res.status).toBe(201);
  expect(res.body.data.name).toBe(`client ${doctype}`);
  expect(await countRows(t, doctype, { name: `client ${doctype}` })).toBe(1);
});

test.each(RULES.filter(([d]) => d !== 'Named By Prompt' && d !== 'Named By UUID'))(
  'v1 ignores the client name for %s',
  async (doctype, extra) => {
    const res = await post(`/api/resource/${doctype}`, {
      title: 't',
      ...extra,
      code: `V1-${doctype}`,
      name: `v1 ${doctype}`,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.name).not.toBe(`v1 ${doctype}`);
    expect(await countRows(t, doctype, { name: `v1 ${doctype}` })).toBe(0);
  },
);

test.each(['Named By Prompt', 'Named By UUID'])('v1 uses the client name for %s', async (doctype) => {
  const res = await post(`/api/resource/${doctype}`, { title: 't', name: `v1 ${doctype}` });
  expect(res.status).toBe(201);
  expect(res.body.data.name).toBe(`v1 ${doctype}`);
});

test.each([
  ['/api/v2/document/Named By Hash', { name: 'a<b', title: 't' }],
  ['/api/v2/document/Named By Hash', { name: 'a>b', title: 't' }],
  ['/api/resource/Named By Prompt', { name: '<script>x</script>', title: 't' }],
  ['/api/resource/Named By Field', { code: 'x<y>', title: 't' }],
])('a name with < or > is 400 and nothing is stored (%s %j)', async (path, body) => {
  const doctype = path.split('/').pop() as string;
  const before = await countRows(t, doctype);
  const res = await post(path, body);
  expect(res.status).toBe(400);
  expect(res.body.exc_type).toBe('InvalidNameError');
  expect(await countRows(t, doctype)).toBe(before);
});

test.each([
  ['/api/v2/document/Named By Hash', { name: 'twice', title: 'first' }, { name: 'twice', title: 'second' }],
  ['/api/resource/Named By Prompt', { name: 'twice', title: 'first' }, { name: 'twice', title: 'second' }],
  ['/api/resource/Named By Field', { code: 'TWICE', title: 'first' }, { code: 'TWICE', title: 'second' }],
])(
  'a duplicate name is 409 DuplicateEntryError and the first document stays (%s)',
  async (path, first, second) => {
    const doctype = path.split('/').pop() as string;
    expect((await post(path, first)).status).toBe(201);
    const before = await countRows(t, doctype);
    const res = await post(path, second);
    expect(res.status).toBe(409);
    expect(res.body.exc_type).toBe('DuplicateEntryError');
    expect(await countRows(t, doctype)).toBe(before);
    const [kept] = await t.site.db.knex(`tab${doctype}`).where('title', 'first');
    expect(kept).toBeDefined();
    expect(await countRows(t, doctype, { title: 'second' })).toBe(0);
  },
);
