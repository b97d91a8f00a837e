// The generated OpenAPI documents are served (minified, compressed, with an ETag) and describe every DocType operation
// the router answers.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { createTestSite, type TestSite } from '../helpers/test-site';
import { registry } from '../../generated';

let t: TestSite;
beforeAll(async () => {
  // Served to Guests here: site config openapi_public (the default, signed-in users only, is api-description-access).
  t = await createTestSite({ site: { openapi_public: true } });
});
afterAll(() => t.close());

test('v1 and v2 documents are served as OpenAPI 3.1 without credentials (openapi_public)', async () => {
  for (const v of ['v1', 'v2']) {
    const res = await t.http.get(`/api/${v}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  }
});

test('every v2 operation of every DocType has a path', async () => {
  const doc = require(path.resolve(__dirname, '../../generated/openapi/v2.json')) as {
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
  const doc = require(path.resolve(__dirname, '../../generated/openapi/v2.json')) as {
    components: { schemas: Record<string, any> };
  };
  const todo = doc.components.schemas.ToDo;
  expect(doc.components.schemas.ToDo_Create.required).toContain('description');
  expect(todo.properties.status.enum).toEqual(expect.arrayContaining(['Open', 'Closed', 'Cancelled']));
  expect(doc.components.schemas.User.properties.roles).toEqual(
    expect.objectContaining({ type: 'array', items: { $ref: '#/components/schemas/HasRole' } }),
  );
});

/** GETs a document over a real socket, so the raw bytes and headers arrive as sent (no client-side decoding). */
async function fetchRaw(url: string, headers: Record<string, string>) {
  const server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: url, headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          })
          .on('error', reject);
      },
    );
  } finally {
    server.close();
  }
}

describe.each(['/api/openapi.json', '/api/v2/openapi.json'])('%s is served', (url) => {
  const file = url.includes('v2') ? 'v2.json' : 'v1.json';
  const generated = () =>
    JSON.parse(readFileSync(path.resolve(__dirname, '../../generated/openapi', file), 'utf8')) as unknown;

  test('minified, with Cache-Control, Vary and an ETag', async () => {
    const res = await fetchRaw(url, {});
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const text = res.body.toString('utf8');
    expect(text).not.toMatch(/\n/);
    expect(JSON.parse(text)).toEqual(generated());
  });

  test.each([
    ['br', zlib.brotliDecompressSync],
    ['gzip', zlib.gunzipSync],
  ] as const)(
    'compressed with %s when accepted, smaller than a tenth of the minified body',
    async (enc, decode) => {
      const plain = await fetchRaw(url, {});
      const res = await fetchRaw(url, { 'Accept-Encoding': `${enc}, identity;q=0.5` });
      expect(res.headers['content-encoding']).toBe(enc);
      expect(res.headers.etag).not.toBe(plain.headers.etag);
      expect(res.body.length).toBeLessThan(plain.body.length / 10);
      expect(JSON.parse(decode(res.body).toString('utf8'))).toEqual(generated());
    },
  );

  test('If-None-Match with the ETag answers 304 without a body; another ETag gets the document', async () => {
    const first = await fetchRaw(url, { 'Accept-Encoding': 'gzip' });
    const again = await fetchRaw(url, {
      'Accept-Encoding': 'gzip',
      'If-None-Match': String(first.headers.etag),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const stale = await fetchRaw(url, { 'Accept-Encoding': 'gzip', 'If-None-Match': '"not-this-one"' });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(first.body.length);
  });
});

test('both documents describe upload_file as multipart, create_new_folder, and the file GETs with their answers', () => {
  for (const [v, prefix] of [
    ['v1', '/api/method'],
    ['v2', '/api/v2/method'],
  ] as const) {
    const doc = require(path.resolve(__dirname, `../../generated/openapi/${v}.json`)) as {
      paths: Record<string, Record<string, any>>;
    };
    const upload = doc.paths[`${prefix}/upload_file`]?.post;
    expect(Object.keys(upload?.requestBody?.content ?? {})).toContain('multipart/form-data');
    const form = upload.requestBody.content['multipart/form-data'].schema.properties;
    expect(Object.keys(form)).toEqual(
      expect.arrayContaining(['file', 'is_private', 'doctype', 'docname', 'folder', 'file_url', 'optimize']),
    );
    expect(doc.paths[`${prefix}/frappe.core.api.file.create_new_folder`]?.post).toBeDefined();
    for (const [file, statuses] of [
      ['/files/{name}', ['200', '206', '304', '404', '416']],
      ['/private/files/{name}', ['200', '206', '304', '401', '403', '404', '416']],
    ] as const) {
      const get = doc.paths[file]?.get;
      expect(Object.keys(get?.responses ?? {})).toEqual(expect.arrayContaining([...statuses]));
      expect(Object.keys(get.responses['200'].headers)).toEqual(
        expect.arrayContaining([
          'ETag',
          'Content-Disposition',
          'X-Content-Type-Options',
          'Content-Security-Policy',
        ]),
      );
      expect(get.responses['206'].headers['Content-Range']).toBeDefined();
    }
    // A public file needs no credentials; a private one the documents' default security.
    expect(doc.paths['/files/{name}']?.get.security).toEqual([]);
    expect(doc.paths['/private/files/{name}']?.get.security).toBeUndefined();
  }
});
