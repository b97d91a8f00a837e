// The generated route modules are what the runtime serves: a route a DocType's module leaves out answers as an operation
// the DocType lacks (as before the modules were mounted), and editing a module's routes changes what the service answers.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import type { Registry } from '../../runtime/registry/registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

const ROOT = path.resolve(__dirname, '../..');

/** The router's own answers (no row for the path or verb), as opposed to an operation's refusal. */
const routerAnswer = (body: { exception?: string }) => /No route for/.test(String(body.exception));

describe('a DocType whose module lacks a route', () => {
  let t: TestSite;
  beforeAll(async () => {
    t = await createTestSite();
  });
  afterAll(() => t.close());

  const send = (verb: 'get' | 'delete' | 'post', url: string) =>
    t.http[verb](url).set('Authorization', t.adminToken);

  test.each([
    // Child tables: v1 lists no route at all, v2 only meta; listing is 403 (read through the parent); a row by name
    // is read through its parent document (test/api/child-row-by-name), so an unknown row is 404.
    ['get', '/api/resource/Note%20Seen%20By/x', 404, 'DoesNotExistError', /Note Seen By x not found/],
    ['get', '/api/v2/document/Note%20Seen%20By', 403, 'PermissionError', /child table/],
    ['get', '/api/v2/document/Note%20Seen%20By/x', 404, 'DoesNotExistError', /Note Seen By x not found/],
    ['get', '/api/v2/doctype/Note%20Seen%20By/count', 403, 'PermissionError', /child table/],
    // Singles: no list, create, delete or copy.
    [
      'get',
      '/api/resource/System%20Settings',
      405,
      'MethodNotAllowedError',
      /list is not allowed on System Settings/,
    ],
    ['post', '/api/v2/document/System%20Settings', 405, 'MethodNotAllowedError', /create is not allowed/],
    [
      'delete',
      '/api/v2/document/System%20Settings/System%20Settings',
      405,
      'MethodNotAllowedError',
      /delete is not allowed on System Settings/,
    ],
    // A DocType of no module.
    [
      'get',
      '/api/v2/document/No%20Such%20DocType',
      404,
      'DoesNotExistError',
      /DocType No Such DocType not found/,
    ],
  ] as const)('%s %s: %d from the operation', async (verb, url, status, excType, message) => {
    const res = await send(verb, url);
    expect({ status: res.status, exc: res.body.exc_type }).toEqual({ status, exc: excType });
    expect(String(res.body.exception)).toMatch(message);
    expect(routerAnswer(res.body)).toBe(false);
  });

  test('a child table is still listed through its parent (its module has no list route)', async () => {
    const res = await send('get', '/api/v2/document/Note%20Seen%20By?parent=Note');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.data)).toBe(true);
  });
});

describe('a generated folder whose ToDo v2 module was edited', () => {
  let dir: string;
  let t: TestSite;
  let registry: Registry;

  beforeAll(async () => {
    mkdirSync(path.join(ROOT, 'test/tmp'), { recursive: true });
    // Beside the other generated folders: the registry imports controllers relative to it.
    dir = mkdtempSync(path.join(ROOT, 'test/tmp/routes-'));
    await runGenerator({ doctypes: ['doctypes'], out: dir, cwd: ROOT });
    const file = path.join(dir, 'routes', 'v2', 'todo.ts');
    const text = readFileSync(file, 'utf8');
    const edited = text
      // v2 GET one is deleted from the module ...
      .replace(/\n {2}\/\*\* GET \/api\/v2\/document\/ToDo\/\{name\} \*\/\n {2}get: \{ row: row\.get \},/, '')
      // ... and its create route answers 200 instead of the table's 201.
      .replace('create: { row: row.create,', 'create: { row: { ...row.create, status: 200 },');
    expect(edited.match(/get: \{ row/g)).toBeNull();
    expect(edited).toContain('status: 200');
    writeFileSync(file, edited);
    registry = (require(path.join(dir, 'index.ts')) as { registry: Registry }).registry;
    t = await createTestSite({ registry });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the registry's operations come from the module", () => {
    const todo = registry.get('ToDo');
    expect(todo?.v2Ops.has('get')).toBe(false);
    expect(todo?.v2Ops.has('update')).toBe(true);
    expect(todo?.v1Ops.has('get')).toBe(true);
  });

  test('the route the module lost answers as an operation ToDo lacks; v1 still serves it', async () => {
    const created = await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'edited module' });
    // v1's create route is the table's: 201.
    expect(created.status).toBe(201);
    const name = encodeURIComponent(String(created.body.data.name));
    const v2 = await t.http.get(`/api/v2/document/ToDo/${name}`).set('Authorization', t.adminToken);
    expect({ status: v2.status, exc: v2.body.exc_type }).toEqual({
      status: 405,
      exc: 'MethodNotAllowedError',
    });
    expect(String(v2.body.exception)).toMatch(/get is not allowed on ToDo/);
    const v1 = await t.http.get(`/api/resource/ToDo/${name}`).set('Authorization', t.adminToken);
    expect(v1.status).toBe(200);
    expect(v1.body.data.description).toBe('edited module');
  });

  test("the module's own row is the one that runs: its create answers 200", async () => {
    const res = await t.http
      .post('/api/v2/document/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'module row' });
    expect(res.status).toBe(200);
    expect(res.body.data.description).toBe('module row');
  });
});
