// The generated typed client (generated/client) against a live server, on SQLite and on MariaDB (TEST_MYSQL_URL): the
// README example end to end with every answer validated against the v2 document, session login with its CSRF token,
// Basic auth, errors as classes by exc_type, paging with for await. Its types are checked by `npm run typecheck`.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApiError, basicAuth, createClient, errors } from '../../generated/client';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { responseValidator, type Exchange } from '../openapi/response-validator';
import { runExample } from './todo-example';

let t: TestSite;
let server: http.Server;
let baseUrl: string;
let apiKey: string;
let apiSecret: string;

beforeAll(async () => {
  t = await createTestSite();
  server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  [apiKey, apiSecret] = t.adminToken.replace(/^token /, '').split(':') as [string, string];
});
afterAll(async () => {
  server?.close();
  await t?.close();
});

/** A fetch that records every exchange, for validation against the v2 document. */
function recordingFetch(log: Exchange[]): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const type = response.headers.get('content-type') ?? '';
    const body: unknown = type.includes('json') ? await response.clone().json() : undefined;
    log.push({ method: request.method, path: new URL(request.url).pathname, status: response.status, body });
    return response;
  };
}

const v2 = () =>
  JSON.parse(readFileSync(path.resolve(__dirname, '../../generated/openapi/v2.json'), 'utf8')) as Parameters<
    typeof responseValidator
  >[0];

test('the README example runs: typed fields, filters, count, paging, a method, errors as classes', async () => {
  // Three more Low ToDos, so paging by two takes several pages.
  const seed = createClient({ baseUrl, auth: basicAuth(apiKey, apiSecret) });
  for (const i of [1, 2, 3]) await seed.insert('ToDo', { description: `paged ${i}`, priority: 'Low' });
  const log: Exchange[] = [];
  const outcome = await runExample(baseUrl, apiKey, apiSecret, recordingFetch(log));
  expect(outcome.created).toMatchObject({
    doctype: 'ToDo',
    priority: 'High',
    description: 'Try the typed client',
  });
  expect(outcome.changed.priority).toBe('Low');
  expect(outcome.rows.find((r) => r.name === outcome.created.name)).toEqual({
    name: outcome.created.name,
    priority: 'Low',
  });
  for (const row of outcome.rows) expect(Object.keys(row).sort()).toEqual(['name', 'priority']);
  expect(outcome.count).toBe(4);
  expect(outcome.paged).toHaveLength(4);
  expect(new Set(outcome.paged).size).toBe(4);
  expect(outcome.user).toBe('Administrator');
  expect(outcome.missing).toBe('404 DoesNotExistError');
  expect(
    log.filter((x) => x.method === 'GET' && x.path.endsWith('/document/ToDo')).length,
  ).toBeGreaterThanOrEqual(3);
  expect(log.flatMap(responseValidator(v2()))).toEqual([]);
});

test('session login keeps the sid cookie and sends the CSRF token on writes', async () => {
  const api = createClient({ baseUrl });
  await expect(api.get('ToDo', 'x')).rejects.toBeInstanceOf(errors.AuthenticationError);
  expect(await api.login('Administrator', 'admin-test-password')).toEqual({ fullName: 'Administrator' });
  const doc = await api.insert('ToDo', { description: 'from a session' });
  expect(doc.owner).toBe('Administrator');
  await api.delete('ToDo', doc.name);
  await api.logout();
  await expect(api.count('ToDo')).rejects.toBeInstanceOf(errors.AuthenticationError);
});

test('errors are classes by exc_type, subclasses of their parents, with status, excType, body and message', async () => {
  const api = createClient({ baseUrl, auth: basicAuth(apiKey, apiSecret) });
  const err = await api.insert('ToDo', { description: '' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(errors.MandatoryError);
  expect(err).toBeInstanceOf(errors.ValidationError);
  expect(err).toBeInstanceOf(ApiError);
  const e = err as InstanceType<typeof errors.MandatoryError>;
  expect({ status: e.status, excType: e.excType }).toEqual({ status: 400, excType: 'MandatoryError' });
  expect(e.message).toMatch(/description/i);
  const dup = await api
    .insert('ToDo', { name: 'dup-typed', description: 'once' })
    .then(() => api.insert('ToDo', { name: 'dup-typed', description: 'twice' }).catch((x: unknown) => x));
  expect(dup).toBeInstanceOf(errors.DuplicateEntryError);
  const wrong = createClient({ baseUrl, auth: basicAuth(apiKey, 'not-the-secret') });
  await expect(wrong.count('ToDo')).rejects.toBeInstanceOf(errors.AuthenticationError);
});

test('a stale modified is refused with TimestampMismatchError', async () => {
  const api = createClient({ baseUrl, auth: basicAuth(apiKey, apiSecret) });
  const doc = await api.insert('ToDo', { description: 'stale' });
  await api.update('ToDo', doc.name, { priority: 'High' });
  await expect(
    api.update('ToDo', doc.name, { priority: 'Low', modified: doc.modified }),
  ).rejects.toBeInstanceOf(errors.TimestampMismatchError);
});
