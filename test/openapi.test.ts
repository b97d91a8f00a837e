// The generated OpenAPI documents are served and describe every DocType operation the router answers.
import path from 'node:path';
import { createTestSite, type TestSite } from './helpers/test-site';
import { registry } from '../generated';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite();
});
afterAll(() => t.close());

test('v1 and v2 documents are served as OpenAPI 3.1 without credentials', async () => {
  for (const v of ['v1', 'v2']) {
    const res = await t.http.get(`/api/${v}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  }
});

test('every v2 operation of every DocType has a path', async () => {
  const doc = require(path.resolve(__dirname, '../generated/openapi/v2.json')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  for (const b of registry.all()) {
    const seg = encodeURIComponent(b.meta.name);
    if (b.v2Ops.has('list')) expect(doc.paths[`/api/v2/document/${seg}`]?.get).toBeDefined();
    if (b.v2Ops.has('create')) expect(doc.paths[`/api/v2/document/${seg}`]?.post).toBeDefined();
    if (b.v2Ops.has('get') && !b.meta.issingle)
      expect(Object.keys(doc.paths[`/api/v2/document/${seg}/{name}`] ?? {}).sort()).toEqual([
        'delete',
        'get',
        'patch',
        'put',
      ]);
    if (b.v2Ops.has('count')) expect(doc.paths[`/api/v2/doctype/${seg}/count`]?.get).toBeDefined();
  }
});

test('the ToDo schema carries Select enums and required fields', () => {
  const doc = require(path.resolve(__dirname, '../generated/openapi/v2.json')) as {
    components: { schemas: Record<string, any> };
  };
  const todo = doc.components.schemas.ToDo;
  expect(todo.required).toContain('description');
  expect(todo.properties.status.enum).toEqual(expect.arrayContaining(['Open', 'Closed', 'Cancelled']));
  expect(doc.components.schemas.User.properties.roles).toEqual(
    expect.objectContaining({ type: 'array', items: { $ref: '#/components/schemas/HasRole' } }),
  );
});
