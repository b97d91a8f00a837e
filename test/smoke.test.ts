// Smoke: a fresh site answers an authenticated create and get on v1 and v2.
import { createTestSite, createUser, type TestSite } from './helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

test('create then get a ToDo on v1 and v2', async () => {
  const created = await t.http
    .post('/api/resource/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'hello' });
  expect(created.status).toBe(201);
  const name = created.body.data.name as string;
  const v1 = await t.http.get(`/api/resource/ToDo/${name}`).set('Authorization', t.adminToken);
  expect(v1.body.data).toMatchObject({ name, description: 'hello', doctype: 'ToDo' });
  const v2 = await t.http.get(`/api/v2/document/ToDo/${name}`).set('Authorization', t.adminToken);
  expect(v2.body.data.date).toBeNull();
  expect('date' in v1.body.data).toBe(false);
});

test('creating a user with roles and a password lets it log in', async () => {
  await createUser(t, 'someone@example.com', ['System Manager']);
  const res = await t.http
    .post('/api/method/login')
    .send({ usr: 'someone@example.com', pwd: 'user-password-1' });
  expect(res.status).toBe(200);
  expect(res.body.message).toBe('Logged In');
});

test('v2 create answers every field, unset ones as null', async () => {
  const res = await t.http
    .post('/api/v2/document/ToDo')
    .set('Authorization', t.adminToken)
    .send({ description: 'x' });
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({ date: null, allocated_to: null, description: 'x', doctype: 'ToDo' });
});
