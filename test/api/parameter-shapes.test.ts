// Malformed list and document parameters answer like every other bad parameter (issue #36 item 18): a JSON string as
// `fields` is 400, the list of a Single DocType is 405 with `Allow`, and a name no document can have is 400.
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
  await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'one' })
    .expect(201);
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });

test('fields="name" (a JSON string, not a list) is 400 on both versions; a list or plain names still work', async () => {
  for (const path of ['/api/resource/ToDo', '/api/v2/document/ToDo']) {
    const res = await t.http.get(path).query({ fields: '"name"' }).set(auth());
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('DataError');
    expect((await t.http.get(path).query({ fields: '["name"]' }).set(auth())).status).toBe(200);
    expect((await t.http.get(path).query({ fields: 'name,description' }).set(auth())).status).toBe(200);
  }
  const body = await t.http
    .post('/api/method/frappe.client.get_list')
    .set(auth())
    .send({ doctype: 'ToDo', fields: '"name"' });
  expect(body.status).toBe(400);
});

test('the list of a Single DocType is 405 with an Allow header naming what the path serves (nothing)', async () => {
  for (const path of ['/api/resource/System Settings', '/api/v2/document/System Settings']) {
    const res = await t.http.get(path).set(auth());
    expect(res.status).toBe(405);
    expect(res.body.exc_type).toBe('MethodNotAllowedError');
    expect(res.headers).toHaveProperty('allow');
    expect(res.headers.allow).toBe('');
  }
  // The Single itself is still read at its own path.
  expect((await t.http.get('/api/resource/System Settings/System Settings').set(auth())).status).toBe(200);
});

test('a 405 of a DocType that lacks one operation of a path names the others', async () => {
  const res = await t.http.post('/api/resource/System Settings').set(auth()).send({});
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe('');
  const single = await t.http.delete('/api/v2/document/System Settings/System Settings').set(auth());
  expect(single.status).toBe(405);
  expect(single.headers.allow).toBe('GET, PUT, PATCH');
  const v1 = await t.http.delete('/api/resource/System Settings/System Settings').set(auth());
  expect(v1.status).toBe(405);
  expect(v1.headers.allow).toBe('GET, PUT');
});

test('a 10,000-character name is 400 for read, update, delete and copy, as for a create', async () => {
  const name = 'n'.repeat(10_000);
  const sends = [
    () => t.http.get(`/api/resource/ToDo/${name}`),
    () => t.http.get(`/api/v2/document/ToDo/${name}`),
    () => t.http.put(`/api/resource/ToDo/${name}`).send({ description: 'x' }),
    () => t.http.delete(`/api/v2/document/ToDo/${name}`),
    () => t.http.get(`/api/v2/document/ToDo/${name}/copy`),
  ];
  for (const send of sends) {
    const res = await send().set(auth());
    expect(res.status).toBe(400);
    expect(res.body.exc_type).toBe('InvalidNameError');
  }
  // The create it matches (its body validation names the length).
  const create = await t.http.post('/api/v2/document/ToDo').set(auth()).send({ name, description: 'x' });
  expect(create.status).toBe(400);
  // 140 characters is still a lookup: 404.
  expect((await t.http.get(`/api/resource/ToDo/${'n'.repeat(140)}`).set(auth())).status).toBe(404);
});
