// The route table and the generated route modules against the running app and the OpenAPI documents: each DocType's
// modules list its kind's rows, every route answers (its operation runs, not the router's 404/405), nothing answers
// that is not a row, and the documents list exactly the table's rows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRouteMatcher } from '../../runtime/routes/route-matcher';
import { docTypeRouteKey, type RouteRow } from '../../runtime/http/route-row';
import { ROUTE_TABLE, docTypeKind, docTypeRows } from '../../runtime/routes/route-table';
import type { Registry } from '../../runtime/registry/registry';
import { fixtureRegistry, generatedFolder } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let registry: Registry;
let dir: string;
beforeAll(async () => {
  registry = await fixtureRegistry();
  dir = await generatedFolder();
  t = await createTestSite({ registry });
});
afterAll(() => t.close());

type Verb = 'get' | 'post' | 'put' | 'patch' | 'delete';
const send = (verb: string, url: string) =>
  (t.http as unknown as Record<string, (u: string) => ReturnType<TestSite['http']['get']>>)[verb]!(url).set(
    'Authorization',
    t.adminToken,
  );
const isRouterAnswer = (res: { status: number; body: { exception?: string } }) =>
  (res.status === 405 && /is not allowed on/.test(String(res.body.exception))) ||
  /No route for/.test(String(res.body.exception));
const verbsOf = (row: RouteRow): string[] =>
  row.verbs === '*' ? ['GET', 'POST', 'PUT', 'DELETE'] : [...row.verbs];
/** A concrete URL of a row for a DocType (the document need not exist: its answer comes from the operation). */
const urlOf = (row: RouteRow, doctype: string, single: boolean) =>
  row.path
    .replace('{doctype}', encodeURIComponent(doctype))
    .replace(/\{name\+?\}/, single ? encodeURIComponent(doctype) : 'no-such-doc')
    .replace('{method}', 'no_such_method');

/** The rows a DocType's generated module lists for a version (v1's under `/api/v1` too), as the router serves them. */
const moduleRows = (binding: ReturnType<Registry['all']>[number], version: 1 | 2): RouteRow[] => {
  const rows = Object.values(version === 1 ? binding.v1 : binding.v2).map((route) => route.row as RouteRow);
  return version === 1
    ? rows.flatMap((row) => [row, { ...row, path: row.path.replace(/^\/api/, '/api/v1') }])
    : rows;
};

test("each DocType's generated modules list exactly the table's rows for its kind", () => {
  for (const binding of registry.all()) {
    for (const version of [1, 2] as const) {
      const listed = Object.entries(version === 1 ? binding.v1 : binding.v2).map(([key, route]) => [
        key,
        route.row,
      ]);
      const table = docTypeRows(docTypeKind(binding.meta), version).map((row) => [docTypeRouteKey(row), row]);
      expect({ doctype: binding.meta.name, version, rows: listed }).toEqual({
        doctype: binding.meta.name,
        version,
        rows: table,
      });
    }
  }
});

test('every route of a generated module answers from its operation, for every DocType, in both versions', async () => {
  let checked = 0;
  for (const binding of registry.all()) {
    const kind = docTypeKind(binding.meta);
    for (const version of [1, 2] as const) {
      for (const row of moduleRows(binding, version)) {
        for (const verb of verbsOf(row)) {
          const res = await send(verb.toLowerCase(), urlOf(row, binding.meta.name, kind === 'single'));
          expect({
            row: row.path,
            verb,
            doctype: binding.meta.name,
            routerAnswer: isRouterAnswer(res),
          }).toEqual({ row: row.path, verb, doctype: binding.meta.name, routerAnswer: false });
          checked++;
        }
      }
    }
  }
  expect(checked).toBeGreaterThan(100);
});

test('the method, OpenAPI and v1-alias rows answer from their operation', async () => {
  for (const url of ['/api/method/ping', '/api/v1/method/ping', '/api/v2/method/ping'])
    expect((await send('get', url)).body).toEqual(
      expect.objectContaining({ [url.includes('v2') ? 'data' : 'message']: 'pong' }),
    );
  for (const url of ['/api/openapi.json', '/api/v1/openapi.json', '/api/v2/openapi.json'])
    expect((await send('get', url)).body.openapi).toBe('3.1.0');
  expect((await send('get', '/api/v1/resource/ToDo')).status).toBe(200);
  // A method family reaches the method by name for every verb; the method answers its own 405.
  const wrongVerb = await send('delete', '/api/method/ping');
  expect(isRouterAnswer(wrongVerb)).toBe(false);
});

test("nothing answers that is not a row: other paths are 404, other verbs on a row path 405 with the rows' verbs", async () => {
  for (const url of [
    '/api',
    '/api/',
    '/api/resource',
    '/api/v2/document',
    '/api/v2/doctype/ToDo',
    '/api/v2/doctype/ToDo/other',
    '/api/v3/document/ToDo',
    '/files/x.png',
    '/api/method',
    '/api/v2/method/',
    '/api/RESOURCE/ToDo',
    '/api/v2/openapi.yaml',
  ]) {
    const res = await send('get', url);
    expect({ url, status: res.status, exc: res.body.exc_type }).toEqual({
      url,
      status: 404,
      exc: 'DoesNotExistError',
    });
  }
  const matcher = createRouteMatcher(ROUTE_TABLE);
  for (const [url, verb] of [
    ['/api/resource/ToDo', 'put'],
    ['/api/resource/ToDo/x', 'patch'],
    ['/api/v2/document/ToDo', 'delete'],
    ['/api/v2/document/ToDo/x/copy', 'post'],
    ['/api/v2/doctype/ToDo/count', 'post'],
    ['/api/v2/openapi.json', 'post'],
  ] as const) {
    const res = await send(verb, url);
    expect({ url, status: res.status }).toEqual({ url, status: 405 });
    // v1's POST of a document path (a document method) needs run_method: it is not in that path's Allow.
    const verbs = matcher.allowed(url);
    expect(String(res.headers.allow).split(', ')).toEqual(
      url === '/api/resource/ToDo/x' ? ['GET', 'PUT', 'DELETE'] : verbs,
    );
  }
  expect(matcher.allowed('/api/v2/document/ToDo/x/copy')).toEqual(['GET', 'PUT', 'PATCH', 'DELETE']);
});

test("a 405 on a DocType's path allows what that DocType answers there; an unknown name keeps the path's verbs", async () => {
  const single = encodeURIComponent('Widget Settings');
  for (const [verb, url, allow] of [
    // A Single has no list and no create: its collection path allows nothing, whatever the verb.
    ['get', `/api/resource/${single}`, ''],
    ['post', `/api/resource/${single}`, ''],
    ['put', `/api/resource/${single}`, ''],
    ['delete', `/api/resource/${single}`, ''],
    ['patch', `/api/v2/document/${single}`, ''],
    // Nor delete: its document path allows GET and PUT (v2 PATCH too).
    ['delete', `/api/resource/${single}/${single}`, 'GET, PUT'],
    ['patch', `/api/resource/${single}/${single}`, 'GET, PUT'],
    ['post', `/api/resource/${single}/${single}`, 'GET, PUT'],
    ['delete', `/api/v2/document/${single}/${single}`, 'GET, PUT, PATCH'],
    ['post', `/api/v2/document/${single}/${single}`, 'GET, PUT, PATCH'],
    // v1's POST of a document path without run_method.
    ['post', '/api/resource/ToDo/x', 'GET, PUT, DELETE'],
    // No DocType of that name: the path's verbs, as Frappe's router (it knows no DocType).
    ['put', '/api/resource/NoSuch', 'GET, POST'],
    ['patch', '/api/resource/NoSuch/x', 'GET, PUT, DELETE'],
  ] as const) {
    const res = await send(verb, url);
    expect({ verb, url, status: res.status, allow: res.headers.allow }).toEqual({
      verb,
      url,
      status: 405,
      allow,
    });
    expect(res.body.exc_type).toBe('MethodNotAllowedError');
  }
  const options = await t.http
    .options(`/api/resource/${single}/${single}`)
    .set('Authorization', t.adminToken);
  expect({ status: options.status, allow: options.headers.allow }).toEqual({
    status: 200,
    allow: 'GET, PUT',
  });
});

describe.each([1, 2] as const)('OpenAPI v%s', (version) => {
  let paths: Record<string, Record<string, { operationId: string }>>;
  beforeAll(() => {
    paths = JSON.parse(readFileSync(path.join(dir, 'openapi', `v${version}.json`), 'utf8')).paths;
  });

  test('every documented path and verb is matched by a row the document names', () => {
    const matcher = createRouteMatcher(ROUTE_TABLE);
    let count = 0;
    for (const [template, ops] of Object.entries(paths)) {
      const url = template.replace('{name}', 'some-doc');
      for (const verb of Object.keys(ops)) {
        const found = matcher.match(url, verb.toUpperCase());
        expect({ template, verb, documented: found?.row.openapi.includes(version) }).toEqual({
          template,
          verb,
          documented: true,
        });
        count++;
      }
    }
    expect(count).toBeGreaterThan(50);
  });

  test('every row the document names is documented, for every DocType of its kinds', () => {
    const documented = new Set(
      Object.entries(paths).flatMap(([p, ops]) =>
        Object.keys(ops).map((verb) => `${verb.toUpperCase()} ${p}`),
      ),
    );
    for (const binding of registry.all()) {
      const single = binding.meta.issingle;
      for (const row of Object.values(version === 1 ? binding.v1 : binding.v2).map(
        (r) => r.row as RouteRow,
      )) {
        if (row.operation === 'documentMethod') continue; // one path per whitelisted method, below
        const url = urlOf(row, binding.meta.name, single).replace('no-such-doc', '{name}');
        for (const verb of verbsOf(row)) expect(documented).toContain(`${verb} ${url}`);
      }
      for (const m of binding.methods?.filter((x) => x.kind === 'document') ?? []) {
        const where =
          version === 2
            ? `/api/v2/document/${encodeURIComponent(binding.meta.name)}/${single ? encodeURIComponent(binding.meta.name) : '{name}'}/method/${m.name}`
            : undefined;
        if (where) expect(Object.keys(paths)).toContain(where);
      }
    }
    for (const row of ROUTE_TABLE.filter((r) => !r.kinds && r.openapi.includes(version))) {
      const prefix = row.path.split('{')[0] as string;
      expect(Object.keys(paths).some((p) => p.startsWith(prefix))).toBe(true);
    }
  });
});

test('every verb of a row is a verb Koa can receive', () => {
  const verbs = new Set<Verb>(['get', 'post', 'put', 'patch', 'delete']);
  for (const row of ROUTE_TABLE)
    for (const verb of verbsOf(row)) expect(verbs.has(verb.toLowerCase() as Verb)).toBe(true);
});
