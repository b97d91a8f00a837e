// Hostile bodies (security.md §6.4 #33 #34 #36-#40, #26) and transport errors: refused with the right status, nothing changed.
import { countRows, expectErrorBody, expectRefused } from './api-version';
import { rawRequest } from './raw-request';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

const MAX_BODY = 512 * 1024;
const MAX_CHILD_ROWS = 50;
let t: TestSite;
let todo: string;
beforeAll(async () => {
  t = await createTestSite({
    registry: await fixtureRegistry(),
    site: { max_body_size: MAX_BODY, max_child_rows: MAX_CHILD_ROWS },
  });
  todo = (
    await t.http
      .post('/api/resource/ToDo')
      .set('Authorization', t.adminToken)
      .send({ description: 'existing' })
  ).body.data.name;
});
afterAll(() => t.close());

const auth = () => ({ Authorization: t.adminToken });
const postJson = (path: string, text: string) =>
  t.http.post(path).set(auth()).set('Content-Type', 'application/json').send(text);
const refused = <R extends { status: number; body: Record<string, unknown> }>(
  request: () => PromiseLike<R>,
  status: number,
  excType?: string,
) => expectRefused(t, request, status, excType);

describe('§6.4 bodies', () => {
  test('#33 the URL names the DocType: a body doctype of User creates a ToDo and no User', async () => {
    const users = await countRows(t, 'User');
    for (const path of ['/api/resource/ToDo', '/api/v2/document/ToDo']) {
      const res = await t.http
        .post(path)
        .set(auth())
        .send({
          doctype: 'User',
          name: 'x@example.com',
          description: 'd',
          roles: [{ role: 'System Manager' }],
        });
      expect(res.status).toBe(201);
      expect(res.body.data.doctype).toBe('ToDo');
    }
    expect(await countRows(t, 'User')).toBe(users);
    expect(await countRows(t, 'User', { name: 'x@example.com' })).toBe(0);
  });

  test('#34 system fields, flags, a rename and __islocal in an update are ignored', async () => {
    const before = await t.site.db.knex('tabToDo').where({ name: todo }).first();
    const res = await t.http
      .put(`/api/resource/ToDo/${todo}`)
      .set(auth())
      .send({
        owner: 'Administrator2',
        creation: '2000-01-01',
        modified_by: 'x',
        flags: { ignore_permissions: true },
        name: 'T2',
        __islocal: 1,
        description: 'changed',
      });
    expect(res.status).toBe(200);
    const after = await t.site.db.knex('tabToDo').where({ name: todo }).first();
    expect(after).toMatchObject({
      owner: before.owner,
      creation: before.creation,
      modified_by: 'Administrator',
      description: 'changed',
    });
    expect(await countRows(t, 'ToDo', { name: 'T2' })).toBe(0);
  });

  test('#34 owner and creation sent on create are replaced by the server', async () => {
    const res = await t.http.post('/api/v2/document/ToDo').set(auth()).send({
      description: 'd',
      owner: 'someone@example.com',
      creation: '2000-01-01 00:00:00',
      modified_by: 'x',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ owner: 'Administrator', modified_by: 'Administrator' });
    expect(res.body.data.creation.startsWith('2000')).toBe(false);
  });

  test('#34 docstatus 2 on a draft of a non-submittable DocType is 400 and changes nothing', async () => {
    await refused(
      () => t.http.put(`/api/resource/ToDo/${todo}`).set(auth()).send({ docstatus: 2 }),
      400,
      'DocstatusTransitionError',
    );
  });

  test('#36 parent fields of a child row are set from the document (create and update), never from the body', async () => {
    const forged = { part_name: 'forged', parent: 'Administrator', parenttype: 'User', parentfield: 'roles' };
    const created = await t.http
      .post('/api/v2/document/Widget')
      .set(auth())
      .send({ title: 'host', parts: [forged] });
    expect(created.status).toBe(201);
    const updated = await t.http
      .put(`/api/v2/document/Widget/${created.body.data.name}`)
      .set(auth())
      .send({ parts: [forged, forged] });
    expect(updated.status).toBe(200);
    const rows = await t.site.db.knex('tabWidget Part').where({ part_name: 'forged' });
    expect(rows.map((r: Record<string, unknown>) => [r.parent, r.parenttype, r.parentfield])).toEqual([
      [created.body.data.name, 'Widget', 'parts'],
      [created.body.data.name, 'Widget', 'parts'],
    ]);
  });

  test('#37 a body over max_body_size is 413, with or without Content-Length', async () => {
    const big = JSON.stringify({ description: 'x'.repeat(MAX_BODY) });
    await refused(() => postJson('/api/resource/ToDo', big), 413, 'RequestEntityTooLargeError');
    const headers = { authorization: t.adminToken, 'content-type': 'application/json' };
    const chunked = () =>
      rawRequest(t.app.callback(), {
        method: 'POST',
        path: '/api/resource/ToDo',
        headers,
        body: Buffer.from(big),
        chunked: true,
      });
    const res = await refused(
      async () => {
        const sent = await chunked();
        return { status: sent.status, body: sent.body ?? {} };
      },
      413,
      'RequestEntityTooLargeError',
    );
    expectErrorBody(res.body, 1, 'RequestEntityTooLargeError');
  });

  test.each([
    [
      'arrays 100,000 deep as the body',
      () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      '/api/resource/ToDo',
    ],
    [
      'arrays 100,000 deep in a JSON field',
      () => `{"title":"deep","payload":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      '/api/resource/Widget',
    ],
    [
      'objects 50,000 deep in a child row',
      () => `{"title":"deep","parts":[${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}]}`,
      '/api/v2/document/Widget',
    ],
  ])('#38 %s is 400, and the service keeps answering', async (_label, body, path) => {
    await refused(() => postJson(path, body()), 400, 'BadRequestError');
    expect((await t.http.get(`/api/resource/ToDo/${todo}`).set(auth())).status).toBe(200);
  });

  test.each([
    ['a truncated two-byte sequence (\\xC3\\x28)', Buffer.from([0xc3, 0x28])],
    ['a lone continuation byte (\\x80)', Buffer.from([0x80])],
    ['a truncated four-byte sequence (\\xF0\\x9F\\x98)', Buffer.from([0xf0, 0x9f, 0x98])],
    ['an encoded surrogate (\\xED\\xA0\\x80)', Buffer.from([0xed, 0xa0, 0x80])],
  ])('#39 (e) invalid UTF-8 in a JSON body, %s, is 400 and stores nothing', async (_label, bad) => {
    const body = Buffer.concat([Buffer.from('{"description":"a'), bad, Buffer.from('b"}')]);
    for (const chunked of [false, true]) {
      const res = await refused(
        () =>
          rawRequest(t.app.callback(), {
            method: 'POST',
            path: '/api/resource/ToDo',
            headers: { 'content-type': 'application/json', authorization: t.adminToken },
            body,
            chunked,
          }) as Promise<{ status: number; body: Record<string, unknown> }>,
        400,
        'BadRequestError',
      );
      expect(String(res.body.exception)).toContain('UTF-8');
    }
  });

  test('#39 valid UTF-8 (two-, three- and four-byte characters) is stored exactly', async () => {
    const text = 'é € 😀 ü';
    const res = await rawRequest(t.app.callback(), {
      method: 'POST',
      path: '/api/resource/ToDo',
      headers: { 'content-type': 'application/json', authorization: t.adminToken },
      body: Buffer.from(JSON.stringify({ description: text }), 'utf8'),
    });
    expect(res.status).toBe(201);
    const name = (res.body?.data as { name: string }).name;
    expect((await t.site.db.knex('tabToDo').where({ name }).first()).description).toBe(text);
  });

  test('a Text value past 65,535 bytes (MariaDB TEXT) is 400 on create and update, on every database', async () => {
    // 70,000 bytes; and 80,000 bytes of UTF-8 in 40,000 UTF-16 units, whose cut at 65,535 bytes splits a character
    const values = ['x'.repeat(70_000), '😀'.repeat(20_000)];
    const widget = (
      await t.http.post('/api/resource/Widget').set(auth()).send({ title: 'text limit', notes: 'short' })
    ).body.data as { name: string };
    const before = await t.site.db.knex('tabWidget').where({ name: widget.name }).first();
    for (const [version, big] of ([1, 2] as const).flatMap((v) => values.map((big) => [v, big] as const))) {
      const base = version === 1 ? '/api/resource/Widget' : '/api/v2/document/Widget';
      const created = await refused(
        () => t.http.post(base).set(auth()).send({ title: 'too long', notes: big }),
        400,
        'DataError',
      );
      expectErrorBody(created.body, version, 'DataError');
      expect(JSON.stringify(created.body)).toContain(
        'Notes (notes): is longer than its column holds (65535 bytes',
      );
      const updated = await refused(
        () => t.http.put(`${base}/${widget.name}`).set(auth()).send({ notes: big }),
        400,
        'DataError',
      );
      expectErrorBody(updated.body, version, 'DataError');
    }
    expect(await t.site.db.knex('tabWidget').where({ name: widget.name }).first()).toEqual(before);
    // 65,535 bytes exactly fit.
    const full = 'é'.repeat(32_767) + 'x';
    const res = await t.http.put(`/api/resource/Widget/${widget.name}`).set(auth()).send({ notes: full });
    expect(res.status).toBe(200);
    expect((await t.site.db.knex('tabWidget').where({ name: widget.name }).first()).notes).toBe(full);
  });

  test('#39 (e) a lone surrogate in a v2 client-chosen name is 400 and stores nothing', async () => {
    for (const name of ['a\\ud800b', '\\udc00', 'x\\ud83d']) {
      await refused(
        () => postJson('/api/v2/document/ToDo', `{"name":"${name}","description":"surrogate name"}`),
        400,
        'InvalidNameError',
      );
    }
    const paired = await postJson(
      '/api/v2/document/ToDo',
      '{"name":"smile \\ud83d\\ude00","description":"ok"}',
    );
    expect(paired.status).toBe(201);
    expect(paired.body.data.name).toBe('smile 😀');
  });

  test('#39 a lone surrogate is refused on write', async () => {
    await refused(() => postJson('/api/resource/ToDo', '{"description":"a\\ud800b"}'), 400, 'DataError');
  });

  test('(f) more child rows than max_child_rows is 413 on create and update; at the cap it passes', async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ part_name: `p${i}` }));
    await refused(
      () =>
        t.http
          .post('/api/v2/document/Widget')
          .set(auth())
          .send({ title: 'many', parts: rows(MAX_CHILD_ROWS + 1) }),
      413,
      'RequestEntityTooLargeError',
    );
    const ok = await t.http
      .post('/api/v2/document/Widget')
      .set(auth())
      .send({ title: 'cap', parts: rows(MAX_CHILD_ROWS) });
    expect(ok.status).toBe(201);
    for (const [method, path] of [
      ['put', `/api/resource/Widget/${ok.body.data.name}`],
      ['patch', `/api/v2/document/Widget/${ok.body.data.name}`],
    ] as const) {
      await refused(
        () =>
          t.http[method](path)
            .set(auth())
            .send({ parts: rows(MAX_CHILD_ROWS + 1) }),
        413,
        'RequestEntityTooLargeError',
      );
    }
    expect(await t.site.db.knex('tabWidget Part').where({ parent: ok.body.data.name })).toHaveLength(
      MAX_CHILD_ROWS,
    );
  });

  test('#39 duplicate keys resolve to the last one, then validate', async () => {
    const res = await postJson(
      '/api/resource/ToDo',
      '{"description":"dup","status":"Open","status":"Closed"}',
    );
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('Closed');
    await refused(
      () => postJson('/api/resource/ToDo', '{"description":"dup","status":"Closed","status":"Nope"}'),
      400,
      'DataError',
    );
  });

  test.each([
    ['application/xml', '<doc><description>x</description></doc>'],
    ['text/plain', '{"description":"x"}'],
    ['application/octet-stream', '{"description":"x"}'],
  ])('#39 Content-Type %s is 415', async (type, body) => {
    await refused(
      () => t.http.post('/api/resource/ToDo').set(auth()).set('Content-Type', type).send(body),
      415,
      'UnsupportedMediaTypeError',
    );
  });

  test('#39 X-HTTP-Method-Override is ignored', async () => {
    const res = await t.http
      .get(`/api/resource/ToDo/${todo}`)
      .set(auth())
      .set('X-HTTP-Method-Override', 'DELETE');
    expect(res.status).toBe(200);
    await refused(
      () => t.http.post(`/api/resource/ToDo/${todo}`).set(auth()).set('X-HTTP-Method-Override', 'DELETE'),
      405,
    );
    expect(await countRows(t, 'ToDo', { name: todo })).toBe(1);
  });

  test.each([
    ['an operator object', '/api/resource/ToDo', '{"description":"x","priority":{"$gt":""}}', 'DataError'],
    ['an impossible date', '/api/resource/ToDo', '{"description":"x","date":"2020-13-45"}', 'DataError'],
    ['Int 1e999', '/api/resource/Widget', '{"title":"x","qty":1e999}', 'DataError'],
    ['Check "yes"', '/api/resource/Widget', '{"title":"x","active":"yes"}', 'DataError'],
    [
      'a Select value outside the options',
      '/api/resource/ToDo',
      '{"description":"x","status":"Reopened"}',
      'DataError',
    ],
    [
      'a Link to a missing document',
      '/api/resource/ToDo',
      '{"description":"x","allocated_to":"nobody@example.com"}',
      'LinkValidationError',
    ],
  ])('#40 %s is 400', async (_label, path, body, excType) => {
    await refused(() => postJson(path, body), 400, excType);
  });

  test('#26 a __proto__ key in a body is refused by the parser; nothing is polluted', async () => {
    const body = '{"description":"p","__proto__":{"polluted":1,"isAdmin":true}}';
    await refused(() => postJson('/api/resource/ToDo', body), 400, 'BadRequestError');
    await refused(
      () =>
        t.http
          .put(`/api/v2/document/ToDo/${todo}`)
          .set(auth())
          .set('Content-Type', 'application/json')
          .send(body),
      400,
      'BadRequestError',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  test('#26 a constructor.prototype key in a body is ignored like any unknown key; nothing is polluted', async () => {
    const body = '{"description":"c","constructor":{"prototype":{"polluted":1,"isAdmin":true}}}';
    const created = await postJson('/api/resource/ToDo', body);
    expect(created.status).toBe(201);
    const updated = await t.http
      .put(`/api/v2/document/ToDo/${created.body.data.name}`)
      .set(auth())
      .set('Content-Type', 'application/json')
      .send(body);
    expect(updated.status).toBe(200);
    for (const res of [created, updated]) expect(Object.keys(res.body.data)).not.toContain('constructor');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect((await t.http.get(`/api/resource/ToDo/${todo}`).set(auth())).status).toBe(200);
  });

  test.each([
    ['an array', '[1, 2]'],
    ['an array of a document', '[{"description":"in a list"}]'],
    ['a string', '"description"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])(
    'a JSON body that is %s, not an object, is 400 on every route that takes a body; nothing changes',
    async (_label, body) => {
      const put = (path: string) => () =>
        t.http.put(path).set(auth()).set('Content-Type', 'application/json').send(body);
      for (const request of [
        () => postJson('/api/resource/ToDo', body),
        () => postJson('/api/v2/document/ToDo', body),
        put(`/api/resource/ToDo/${todo}`),
        put(`/api/v2/document/ToDo/${todo}`),
        () => postJson('/api/v2/document/ToDo/bulk_insert', body),
        () => postJson('/api/method/frappe.client.insert', body),
      ]) {
        const res = await refused(request, 400, 'BadRequestError');
        expect(res.body.exception).toContain('The request body must be a JSON object');
      }
    },
  );

  test('bad JSON is 400 with the error body of each version', async () => {
    for (const [path, version] of [
      ['/api/resource/ToDo', 1],
      ['/api/v2/document/ToDo', 2],
    ] as const) {
      const res = await refused(() => postJson(path, '{"description": '), 400, 'BadRequestError');
      expectErrorBody(res.body, version, 'BadRequestError');
    }
  });
});
