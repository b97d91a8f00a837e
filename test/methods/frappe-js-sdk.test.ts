// The real frappe-js-sdk package, unchanged, against the service on an ephemeral port: login, the db calls and call.get/post.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { FrappeApp } from 'frappe-js-sdk';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let server: Server;
let url: string;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** The SDK with token auth (Node has no cookie jar; the browser flow would carry the session cookie instead). */
const tokenApp = () =>
  new FrappeApp(url, { useToken: true, token: () => t.adminToken.replace(/^token /, ''), type: 'token' });

test('auth: loginWithUsernamePassword, and getLoggedInUser', async () => {
  const app = new FrappeApp(url);
  const login = await app
    .auth()
    .loginWithUsernamePassword({ username: 'Administrator', password: 'admin-test-password' });
  expect(login).toMatchObject({ message: 'Logged In', full_name: 'Administrator' });
  // The SDK shows the body's `message` (Frappe's LoginManager.fail sets it).
  await expect(
    app.auth().loginWithUsernamePassword({ username: 'Administrator', password: 'wrong' }),
  ).rejects.toMatchObject({ httpStatus: 401, message: 'Invalid login credentials' });
  expect(await tokenApp().auth().getLoggedInUser()).toBe('Administrator');
});

test('db: createDoc, getDoc, updateDoc, getDocList with filters, getCount, getValue, setValue, deleteDoc', async () => {
  const db = tokenApp().db();
  const a = await db.createDoc('Method Probe', { title: 'sdk-a', counter: 1 });
  expect(a).toMatchObject({ name: 'sdk-a', counter: 1 });
  await db.createDoc('Method Probe', { title: 'sdk-b', counter: 2 });
  expect(await db.getDoc('Method Probe', 'sdk-a')).toMatchObject({ name: 'sdk-a', counter: 1 });
  expect(await db.updateDoc('Method Probe', 'sdk-a', { counter: 10 })).toMatchObject({
    name: 'sdk-a',
    counter: 10,
  });
  const list = await db.getDocList('Method Probe', {
    fields: ['name', 'counter'],
    filters: [['counter', '>', 5]],
    orderBy: { field: 'counter', order: 'desc' },
    limit: 10,
  });
  expect(list).toEqual([{ name: 'sdk-a', counter: 10 }]);
  expect(await db.getCount('Method Probe', [['name', 'like', 'sdk-%']])).toBe(2);
  expect(await db.getValue('Method Probe', 'counter', [['name', '=', 'sdk-b']])).toEqual({
    message: { counter: 2 },
  });
  const set = await db.setValue('Method Probe', 'sdk-b', 'counter', 3);
  expect(set.message).toMatchObject({ name: 'sdk-b', counter: 3 });
  expect(await db.deleteDoc('Method Probe', 'sdk-b')).toEqual({ data: 'ok' });
  expect(await db.getCount('Method Probe', [['name', 'like', 'sdk-%']])).toBe(1);
  await expect(db.getDoc('Method Probe', 'sdk-b')).rejects.toMatchObject({
    httpStatus: 404,
    exc_type: 'DoesNotExistError',
  });
});

test('call: get and post reach whitelisted functions with their arguments', async () => {
  const call = tokenApp().call();
  expect(await call.get('widgets.widget.widget.stock', { sku: 'S1' })).toEqual({
    message: { sku: 'S1', qty: 42 },
  });
  expect(await call.get('widgets.widget.widget.echo', { text: 'x', tags: ['a'], count: 2 })).toEqual({
    message: { text: 'x', tags: ['a'], count: 2 },
  });
  const posted = await call.post('widgets.widget.widget.greet', { name: 'SDK' });
  expect(posted.message).toBe('greeted');
  expect(await call.get('ping')).toEqual({ message: 'pong' });
  await expect(call.post('widgets.widget.widget.stock', { sku: 'S1' })).rejects.toMatchObject({
    httpStatus: 405,
  });
});

test('db: submit, cancel and getSingleValue', async () => {
  const db = tokenApp().db();
  const order = await db.createDoc('Gadget Order', {
    customer: 'sdk-order',
    qty: 1,
    parts: [{ part_name: 'p' }],
  });
  const submitted = await db.submit({ doctype: 'Gadget Order', name: order.name });
  expect(submitted).toMatchObject({ name: order.name, docstatus: 1 });
  // Frappe's client.cancel answers the cancelled document.
  expect(await db.cancel('Gadget Order', order.name)).toMatchObject({
    message: { name: order.name, docstatus: 2 },
  });
  expect((await db.getDoc('Gadget Order', order.name)).docstatus).toBe(2);
  await db.updateDoc('Widget Settings', 'Widget Settings', { default_qty: 7 });
  expect(await db.getSingleValue('Widget Settings', 'default_qty')).toEqual({ message: 7 });
  // getValue on a Single reads its document; with no match it is `{}` as Frappe's.
  expect(await db.getValue('Widget Settings', 'default_qty')).toEqual({ message: { default_qty: 7 } });
  expect(await db.getValue('Method Probe', 'counter', [['name', '=', 'no-such-probe']])).toEqual({
    message: {},
  });
});
