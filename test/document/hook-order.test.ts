// Controller hooks run in Frappe's order on insert, save and delete, and a before-write hook's changes are stored.
import type { HookCall } from '../fixtures/doctypes/widgets/record-hooks';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let calls: HookCall[];
beforeAll(async () => {
  const registry = await fixtureRegistry();
  calls = (registry.get('Widget')?.controller as { hookCalls: HookCall[] }).hookCalls;
  t = await createTestSite({ registry });
});
afterAll(() => t.close());

const hooksOf = (title: string) => calls.filter((c) => c.key === title).map((c) => c.hook);
const auth = () => ({ Authorization: t.adminToken });

test('insert: before_insert, before_naming, autoname, before_validate, validate, before_save, after_insert, on_update', async () => {
  const res = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'order insert' });
  expect(res.status).toBe(201);
  expect(hooksOf('order insert')).toEqual([
    'before_insert',
    'before_naming',
    'autoname',
    'before_validate',
    'validate',
    'before_save',
    'after_insert',
    'on_update',
  ]);
});

test('a v2 client name skips autoname and nothing else', async () => {
  const res = await t.http
    .post('/api/v2/document/Widget')
    .set(auth())
    .send({ title: 'order named', name: 'W-named' });
  expect(res.status).toBe(201);
  expect(hooksOf('order named')).toEqual([
    'before_insert',
    'before_naming',
    'before_validate',
    'validate',
    'before_save',
    'after_insert',
    'on_update',
  ]);
});

test('save: before_validate, validate, before_save, on_update', async () => {
  const { body } = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'order save' });
  calls.length = 0;
  const res = await t.http.put(`/api/resource/Widget/${body.data.name}`).set(auth()).send({ qty: 2 });
  expect(res.status).toBe(200);
  expect(hooksOf('order save')).toEqual(['before_validate', 'validate', 'before_save', 'on_update']);
});

test('delete: on_trash, after_delete', async () => {
  const { body } = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'order delete' });
  calls.length = 0;
  expect((await t.http.delete(`/api/resource/Widget/${body.data.name}`).set(auth())).status).toBe(202);
  expect(hooksOf('order delete')).toEqual(['on_trash', 'after_delete']);
});

test('values a hook sets before the write are stored; a refused request runs no after-write hook', async () => {
  const { body } = await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'order log' });
  const stored = await t.site.db.knex('tabWidget').where({ name: body.data.name }).first('hook_log');
  expect(stored.hook_log).toBe('before_insert,before_naming,autoname,before_validate,validate,before_save');
  expect(body.data.hook_log).toBe(stored.hook_log);
  const refused = await t.http
    .post('/api/resource/Widget')
    .set(auth())
    .send({ title: 'order refused', qty: -1 });
  expect(refused.status).toBe(400);
  expect(hooksOf('order refused')).toEqual([
    'before_insert',
    'before_naming',
    'autoname',
    'before_validate',
    'validate',
  ]);
});
