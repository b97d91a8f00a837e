// A Password field of a child row is stored as its parent's are: a hash in `__Auth` (under the child DocType and the
// row's name), a mask in the row; a row removed by a save, or the whole document deleted, takes its secret with it.
import { verifyPassword } from '../../runtime/auth/passwords';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const stored = (rowName: string) =>
  t.site.db.knex('__Auth').where({ doctype: 'Vault Secret', name: rowName, fieldname: 'pin' }).first();
const rows = (parent: string) =>
  t.site.db.knex('tabVault Secret').where({ parent }).orderBy('idx').select('name', 'label', 'pin');

test('a child row PIN is stored hashed, never in its row nor in any answer', async () => {
  for (const base of ['/api/resource/Vault Entry', '/api/v2/document/Vault Entry']) {
    const res = await t.http
      .post(base)
      .set(auth())
      .send({ title: 'v', secrets: [{ label: 'a', pin: 'pin-1234-a' }, { label: 'b' }] });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain('pin-1234-a');
    const name = res.body.data.name as string;
    const [a, b] = await rows(name);
    expect(a).toMatchObject({ label: 'a', pin: '*****' });
    expect(b!.pin).not.toBe('pin-1234-a');
    const secret = await stored(a!.name);
    expect(secret.password).not.toContain('pin-1234-a');
    expect(await verifyPassword('pin-1234-a', secret.password)).toBe(true);
    expect(await stored(b!.name)).toBeUndefined();
    const read = await t.http.get(`${base}/${name}`).set(auth());
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('pin-1234-a');
  }
});

test('an update keeps a masked PIN, replaces a new one, and forgets a removed row; a delete forgets them all', async () => {
  const created = await t.http
    .post('/api/resource/Vault Entry')
    .set(auth())
    .send({
      title: 'w',
      secrets: [
        { label: 'keep', pin: 'pin-keep-1' },
        { label: 'drop', pin: 'pin-drop-1' },
      ],
    });
  const name = created.body.data.name as string;
  const [keep, drop] = await rows(name);
  const kept = (await stored(keep!.name)).password as string;

  // The row as a read returns it (mask) keeps its secret; the other row is removed.
  let res = await t.http
    .put(`/api/resource/Vault Entry/${name}`)
    .set(auth())
    .send({ secrets: [{ name: keep!.name, label: 'keep', pin: '*****' }] });
  expect(res.status).toBe(200);
  expect((await stored(keep!.name)).password).toBe(kept);
  expect(await stored(drop!.name)).toBeUndefined();

  res = await t.http
    .put(`/api/resource/Vault Entry/${name}`)
    .set(auth())
    .send({ secrets: [{ name: keep!.name, label: 'keep', pin: 'pin-keep-2' }] });
  expect(res.status).toBe(200);
  expect(await verifyPassword('pin-keep-2', (await stored(keep!.name)).password)).toBe(true);
  expect((await rows(name))[0]!.pin).toBe('*****');

  expect((await t.http.delete(`/api/resource/Vault Entry/${name}`).set(auth())).status).toBe(202);
  expect(await stored(keep!.name)).toBeUndefined();
});
