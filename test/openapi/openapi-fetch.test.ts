// Done-when of the client-SDK issue for third-party generators: openapi-typescript generates types from both
// documents, a script written against them with openapi-fetch (test/openapi/clients/) type-checks under tsc --strict
// with no casts, runs against a live server, and every answer it got validates against the document with ajv.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { responseValidator, type Exchange } from './response-validator';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
const documentOf = (version: 1 | 2) =>
  JSON.parse(readFileSync(path.join(root, `generated/openapi/v${version}.json`), 'utf8')) as Parameters<
    typeof responseValidator
  >[0];

let t: TestSite;
let server: http.Server;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  t = await createTestSite();
  server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mkdirSync(path.join(root, 'test/tmp'), { recursive: true });
  dir = mkdtempSync(path.join(root, 'test/tmp/openapi-fetch-'));
  mkdirSync(path.join(dir, 'types'));
  for (const version of [1, 2]) {
    await run(bin('openapi-typescript'), [
      path.join(root, `generated/openapi/v${version}.json`),
      '-o',
      path.join(dir, `types/v${version}.ts`),
    ]);
    copyFileSync(
      path.join(__dirname, `clients/openapi-fetch-v${version}.ts`),
      path.join(dir, `openapi-fetch-v${version}.ts`),
    );
  }
}, 120_000);

afterAll(async () => {
  server?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fetch that records every exchange (JSON bodies parsed) for validation against the document. */
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

/** Runs tsc --strict on files of the temp folder; answers its output (empty: no errors). */
async function typeCheck(...files: string[]): Promise<string> {
  const result = await run(
    bin('tsc'),
    [
      '--strict',
      '--noEmit',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'node16',
      '--moduleResolution',
      'node16',
      '--lib',
      'es2023,dom',
      '--types',
      'node',
      ...files,
    ],
    { cwd: dir },
  ).catch((err: { stdout?: string }) => ({ stdout: `tsc failed:\n${err.stdout ?? String(err)}` }));
  return result.stdout;
}

test('the scripts type-check under tsc --strict against the generated types, with no casts', async () => {
  for (const version of [1, 2]) {
    const source = readFileSync(path.join(dir, `openapi-fetch-v${version}.ts`), 'utf8');
    expect(source).not.toMatch(/\bas\s+(unknown|any|[A-Z{[])|<[A-Z]\w*>\s*\w|!\.|!\)|\bany\b/);
  }
  expect(await typeCheck('openapi-fetch-v1.ts', 'openapi-fetch-v2.ts')).toBe('');
}, 120_000);

test('the types refuse what the server refuses: an unknown Select value, a missing path parameter', async () => {
  writeFileSync(
    path.join(dir, 'refused.ts'),
    `import createClient from 'openapi-fetch';
import type { paths } from './types/v2';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
export const a = client.PATCH('/api/v2/document/ToDo/{name}', { params: { path: { name: 'x' } }, body: { priority: 'Urgent' } });
export const b = client.GET('/api/v2/document/ToDo/{name}', {});
`,
  );
  const out = await typeCheck('refused.ts');
  expect(out).toMatch(/refused\.ts\(4,\d+\): error TS2322/);
  expect(out).toMatch(/refused\.ts\(5,\d+\): error TS2/);
}, 120_000);

describe.each([1, 2] as const)('the v%s script against a live server', (version) => {
  test('creates, reads, updates, lists, counts, calls a method and deletes; every answer matches the document', async () => {
    const log: Exchange[] = [];
    const script = require(path.join(dir, `openapi-fetch-v${version}.ts`)) as {
      run: (base: string, auth: string, f: typeof fetch) => Promise<Record<string, unknown>>;
    };
    const outcome = await script.run(baseUrl, t.adminToken, recordingFetch(log));
    expect(outcome).toMatchObject({
      readPriority: 'High',
      patchedPriority: 'Low',
      user: 'Administrator',
      deleted: 'ok',
    });
    expect(outcome.listedNames).toContain(outcome.name);
    expect(outcome.count).toBeGreaterThanOrEqual(1);
    expect(log.map((x) => `${x.method} ${x.status}`)).toEqual([
      'POST 201',
      'GET 200',
      version === 2 ? 'PATCH 200' : 'PUT 200',
      'GET 200',
      'GET 200',
      'GET 200',
      'DELETE 202',
    ]);
    const check = responseValidator(documentOf(version));
    expect(log.flatMap(check)).toEqual([]);
  });
});

describe.each([1, 2] as const)('v%s error answers match the document', (version) => {
  const resource = version === 2 ? '/api/v2/document' : '/api/resource';
  const method = version === 2 ? '/api/v2/method' : '/api/method';

  test.each([
    ['unknown document', 'GET', '/ToDo/no-such-todo', undefined, 'token', 404],
    ['bad filters', 'GET', '/ToDo?filters=%5B%5B%22nope%22%2C%22%3D%22%2C1%5D%5D', undefined, 'token', 400],
    ['wrong credentials', 'GET', '/ToDo', undefined, 'token nope:nope', 401],
    ['missing mandatory field', 'POST', '/ToDo', { priority: 'Low' }, 'token', 400],
    ['a body that is not JSON', 'POST', '/ToDo', 'description=x', 'token', 415],
  ])('%s', async (_what, verb, suffix, body, auth, status) => {
    const log: Exchange[] = [];
    const f = recordingFetch(log);
    const headers: Record<string, string> = {
      Authorization: auth === 'token' ? t.adminToken : auth,
    };
    if (typeof body === 'string') headers['Content-Type'] = 'text/plain';
    else if (body) headers['Content-Type'] = 'application/json';
    await f(`${baseUrl}${resource}${suffix}`, {
      method: verb,
      headers,
      body: typeof body === 'string' ? body : body ? JSON.stringify(body) : undefined,
    });
    expect(log[0]?.status).toBe(status);
    expect(log.flatMap(responseValidator(documentOf(version)))).toEqual([]);
  });

  test('a duplicate name is 409, ping and login need no credentials, login answers its csrf_token', async () => {
    const log: Exchange[] = [];
    const f = recordingFetch(log);
    const json = { 'Content-Type': 'application/json', Authorization: t.adminToken };
    const name = `dup-${version}-${Date.now()}`;
    const payload = JSON.stringify({ name, description: 'twice' });
    if (version === 2) {
      await f(`${baseUrl}${resource}/ToDo`, { method: 'POST', headers: json, body: payload });
      await f(`${baseUrl}${resource}/ToDo`, { method: 'POST', headers: json, body: payload });
    }
    await f(`${baseUrl}${method}/ping`, {});
    await f(`${baseUrl}${method}/frappe.ping`, {});
    const login = await f(`${baseUrl}${method}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ usr: 'Administrator', pwd: 'admin-test-password' }),
    });
    expect(login.status).toBe(200);
    expect(log.map((x) => x.status)).toEqual([...(version === 2 ? [201, 409] : []), 200, 200, 200]);
    expect(log.flatMap(responseValidator(documentOf(version)))).toEqual([]);
  });
});

test('the validator finds mismatches: a wrong type, a missing key, an undescribed status, an unknown path', () => {
  const check = responseValidator(documentOf(2));
  const get = { method: 'GET', path: '/api/v2/document/ToDo/x' };
  expect(check({ ...get, status: 200, body: { data: { doctype: 'ToDo', name: 'x' } } })).toEqual([]);
  expect(check({ ...get, status: 200, body: { data: { doctype: 'ToDo', name: 5 } } }).join()).toMatch(
    /\/data\/name must be string/,
  );
  expect(check({ ...get, status: 200, body: { data: { doctype: 'ToDo' } } }).join()).toMatch(/name/);
  expect(check({ ...get, status: 404, body: { exception: 'x' } }).join()).toMatch(/exc_type/);
  expect(check({ ...get, status: 418, body: {} }).join()).toMatch(/418 is not described/);
  expect(check({ method: 'GET', path: '/api/v2/nowhere', status: 200, body: {} }).join()).toMatch(
    /no operation/,
  );
});
