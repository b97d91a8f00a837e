// User Permissions: a restricted user reaches only documents whose name or Link values fall inside the allowed
// values, in get, list, count, update, delete and Link validation; applicable_for narrows a row to one DocType.
import type { TestSite } from '../helpers/test-site';
import { createUser } from '../helpers/test-site';
import {
  adminPost,
  createPermissionSite,
  storedRow,
  USER_IDS,
  type PermissionUsers,
} from './helpers/permission-site';

let t: TestSite;
let users: PermissionUsers;

beforeAll(async () => {
  ({ t, users } = await createPermissionSite());
});
afterAll(() => t.close());

const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((r) => r.name).sort();

describe('Link validation on write', () => {
  test('a Link outside the allowed values is 403 whether or not the target exists, and stores nothing', async () => {
    const answers = new Set<string>();
    for (const region of ['West', 'Nowhere']) {
      for (const path of ['/api/resource/Perm Case', '/api/v2/document/Perm Case']) {
        const title = `link ${region} ${path}`;
        const res = await t.http.post(path).set('Authorization', users.restricted).send({ title, region });
        expect([region, res.status, res.body.exc_type]).toEqual([region, 403, 'PermissionError']);
        answers.add(
          `${res.status} ${res.body.exc_type} ${String(res.body.exception).replace(region, '<region>')}`,
        );
        expect(await t.site.db.knex('tabPerm Case').where({ title })).toHaveLength(0);
      }
    }
    // The same refusal for an existing and a missing target: no existence oracle.
    expect(answers.size).toBe(1);
  });

  test('inside the allowed values, or empty, the Link passes; a missing allowed-looking value is still a LinkValidationError', async () => {
    const ok = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.restricted)
      .send({ title: 'in north', region: 'North' });
    expect(ok.status).toBe(201);
    const empty = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.restricted)
      .send({ title: 'no region' });
    expect(empty.status).toBe(201);
    const writer = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.writer)
      .send({ title: 'nowhere', region: 'Nowhere' });
    expect(writer.status).toBe(400);
    expect(writer.body.exc_type).toBe('LinkValidationError');
  });

  test('child rows’ Links are checked too', async () => {
    const res = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', users.restricted)
      .send({ title: 'child link', items: [{ item: 'x', region: 'West' }] });
    expect(res.status).toBe(403);
    expect(await t.site.db.knex('tabPerm Case').where({ title: 'child link' })).toHaveLength(0);
  });

  test('moving a reachable case to a region outside the allowed values is refused and changes nothing', async () => {
    const doc = await adminPost(t, 'Perm Case', { title: 'mover', region: 'North' });
    const before = await storedRow(t, 'Perm Case', doc.name);
    const res = await t.http
      .put(`/api/v2/document/Perm Case/${doc.name}`)
      .set('Authorization', users.restricted)
      .send({ region: 'West' });
    expect(res.status).toBe(403);
    expect(await storedRow(t, 'Perm Case', doc.name)).toEqual(before);
  });
});

describe('restrictions on the DocType itself (name) and applicable_for', () => {
  let regionUser: string;
  beforeAll(async () => {
    regionUser = await createUser(t, 'region-user@perm.test', ['Case Writer']);
    // Restricted to the region South, for Perm Region only (applicable_for): Perm Case stays unrestricted.
    await adminPost(t, 'User Permission', {
      user: 'region-user@perm.test',
      allow: 'Perm Region',
      for_value: 'South',
      apply_to_all_doctypes: 0,
      applicable_for: 'Perm Region',
    });
  });

  test('the restricted DocType answers only its allowed names: get, list and count', async () => {
    expect(
      (await t.http.get('/api/v2/document/Perm Region/South').set('Authorization', regionUser)).status,
    ).toBe(200);
    const west = await t.http.get('/api/v2/document/Perm Region/West').set('Authorization', regionUser);
    expect(west.status).toBe(403);
    const list = await t.http.get('/api/v2/document/Perm Region').set('Authorization', regionUser);
    expect(names(list)).toEqual(['South']);
    const count = await t.http.get('/api/v2/doctype/Perm Region/count').set('Authorization', regionUser);
    expect(count.body.data).toBe(1);
  });

  test('a row applicable to Perm Region only does not restrict Perm Case', async () => {
    const doc = await adminPost(t, 'Perm Case', { title: 'elsewhere', region: 'West' });
    expect(
      (await t.http.get(`/api/v2/document/Perm Case/${doc.name}`).set('Authorization', regionUser)).status,
    ).toBe(200);
    const created = await t.http
      .post('/api/v2/document/Perm Case')
      .set('Authorization', regionUser)
      .send({ title: 'west ok', region: 'West' });
    expect(created.status).toBe(201);
  });

  test('link expansion shows only the linked documents inside the User Permissions; others stay plain names', async () => {
    const west = await adminPost(t, 'Perm Case', { title: 'expand west', region: 'West' });
    const south = await adminPost(t, 'Perm Case', { title: 'expand south', region: 'South' });
    const plain = await t.http
      .get(`/api/resource/Perm Case/${west.name}`)
      .query({ expand_links: 1 })
      .set('Authorization', regionUser);
    expect(plain.status).toBe(200);
    expect(plain.body.data.region).toBe('West');
    const expanded = await t.http
      .get(`/api/resource/Perm Case/${south.name}`)
      .query({ expand_links: 1 })
      .set('Authorization', regionUser);
    expect(expanded.status).toBe(200);
    expect(expanded.body.data.region).toMatchObject({ name: 'South', region_name: 'South' });
  });

  test('the all-DocTypes rows of the restricted user restrict the Perm Region list as well', async () => {
    const list = await t.http.get('/api/v2/document/Perm Region').set('Authorization', users.restricted);
    expect(names(list)).toEqual(['North', 'South']);
  });
});

describe('changes take effect at once', () => {
  test('a new User Permission restricts the user on the next request; deleting it lifts the restriction', async () => {
    const user = await createUser(t, 'later@perm.test', ['Case Reader']);
    const doc = await adminPost(t, 'Perm Case', { title: 'later', region: 'West' });
    const url = `/api/v2/document/Perm Case/${doc.name}`;
    expect((await t.http.get(url).set('Authorization', user)).status).toBe(200);
    const perm = await adminPost(t, 'User Permission', {
      user: 'later@perm.test',
      allow: 'Perm Region',
      for_value: 'North',
    });
    expect((await t.http.get(url).set('Authorization', user)).status).toBe(403);
    const del = await t.http
      .delete(`/api/v2/document/User Permission/${perm.name}`)
      .set('Authorization', t.adminToken);
    expect(del.status).toBe(202);
    expect((await t.http.get(url).set('Authorization', user)).status).toBe(200);
  });

  test('the restricted user may not grant itself User Permissions', async () => {
    const res = await t.http
      .post('/api/v2/document/User Permission')
      .set('Authorization', users.restricted)
      .send({ user: USER_IDS.restricted, allow: 'Perm Region', for_value: 'West' });
    expect(res.status).toBe(403);
    expect(await t.site.db.knex('tabUser Permission').where({ user: USER_IDS.restricted })).toHaveLength(2);
  });
});
