// A disabled Role, as Frappe: disabling it takes it from every user who has it (their rights go with it at once), a
// standard role cannot be disabled (400, nothing changes), and a User saved with a disabled role is saved without it.
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const admin = () => ({ Authorization: t.adminToken });
const hasRoleRows = async (role: string) =>
  Number(((await t.site.db.knex('tabHas Role').where({ role }).count({ n: '*' })) as { n: unknown }[])[0]?.n);
const disable = (role: string, disabled = 1) =>
  t.http
    .put(`/api/resource/Role/${encodeURIComponent(role)}`)
    .set(admin())
    .send({ disabled });
const rolesOf = async (user: string) =>
  (
    (await t.http.get(`/api/resource/User/${user}`).set(admin()).expect(200)).body.data.roles as {
      role: string;
      idx: number;
    }[]
  ).map((r) => [r.role, r.idx]);

test('disabling a role takes it from its users: their next read under it is 403, their rows are gone', async () => {
  const reader = await createUser(t, 'disabled-reader@example.com', ['Probe Reader']);
  await createUser(t, 'disabled-reader-2@example.com', ['Probe Reader', 'Ledger Reader']);
  await t.http
    .post('/api/v2/document/Method Probe')
    .set(admin())
    .send({ title: 'p', counter: 0 })
    .expect(201);
  const read = () => t.http.get('/api/resource/Method Probe/p').set('Authorization', reader);
  expect((await read()).status).toBe(200);
  expect(await hasRoleRows('Probe Reader')).toBe(2);

  const res = await disable('Probe Reader');
  expect(res.status).toBe(200);
  expect(res.body.data.disabled).toBe(1);
  expect(await hasRoleRows('Probe Reader')).toBe(0);
  expect((await read()).status).toBe(403);
  expect(await rolesOf('disabled-reader-2@example.com')).toEqual([['Ledger Reader', 2]]);

  // Enabled again, it is given back to no one (as Frappe).
  expect((await disable('Probe Reader', 0)).status).toBe(200);
  expect((await read()).status).toBe(403);
});

test('a User saved with a disabled role is saved without that row (created or updated)', async () => {
  for (const role_name of ['Gone Role', 'Kept Role'])
    await t.http.post('/api/resource/Role').set(admin()).send({ role_name }).expect(201);
  expect((await disable('Gone Role')).status).toBe(200);

  const created = await t.http
    .post('/api/resource/User')
    .set(admin())
    .send({
      email: 'with-gone-role@example.com',
      first_name: 'g',
      roles: [{ role: 'Gone Role' }, { role: 'Kept Role' }],
    });
  expect(created.status).toBe(201);
  expect(created.body.data.roles.map((r: { role: string; idx: number }) => [r.role, r.idx])).toEqual([
    ['Kept Role', 1],
  ]);
  const updated = await t.http
    .put('/api/resource/User/with-gone-role@example.com')
    .set(admin())
    .send({ roles: [{ role: 'Kept Role' }, { role: 'Gone Role' }] });
  expect(updated.status).toBe(200);
  expect(await rolesOf('with-gone-role@example.com')).toEqual([['Kept Role', 1]]);
  expect(await hasRoleRows('Gone Role')).toBe(0);
});

test.each(['System Manager', 'Administrator', 'All', 'Guest'])(
  'the standard role %s cannot be disabled: 400, and no one loses it',
  async (role) => {
    const before = await hasRoleRows(role);
    const res = await disable(role);
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('ValidationError');
    expect(res.body.exception).toContain('Standard roles cannot be disabled');
    const stored = await t.site.db.knex('tabRole').where({ name: role }).first('disabled');
    expect(Number(stored.disabled)).toBe(0);
    expect(await hasRoleRows(role)).toBe(before);
  },
);

test("a System Manager's keys keep working after a refused disable of System Manager", async () => {
  const manager = await createUser(t, 'disabled-sm@example.com', ['System Manager']);
  const res = await t.http
    .put('/api/resource/Role/System Manager')
    .set('Authorization', manager)
    .send({ disabled: 1 });
  expect(res.status).toBe(400);
  expect((await t.http.get('/api/resource/Role/System Manager').set('Authorization', manager)).status).toBe(
    200,
  );
});
