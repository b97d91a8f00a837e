// Remembered documents (GET one on MariaDB, query/result-cache.ts): whoever read a document first, every request gets
// its own user's answer (document permissions, if_owner, permlevel and Password fields apply to the remembered row);
// a write through another site object on the same database (its own pool and cache, as another process has), to the
// row or only to a child row, or a delete, shows in the very next GET; an answer changed by its caller changes no
// other. On MariaDB and PostgreSQL with and without Redis change notices; on SQLite the same answers (nothing is
// remembered there). A write that skips the change counter is not seen: that proves the document is remembered.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { readDoc } from '../../runtime/query/read-doc';
import { getDocument } from '../../runtime/operations/document-operations';
import type { Site } from '../../runtime/site';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';
import { HAS_CHANGE_COUNTER, unbumpedUpdate } from '../helpers/unbumped-write';

jest.setTimeout(120_000);
const onCounter = HAS_CHANGE_COUNTER ? test : test.skip;

const ORDERS = '/api/v2/document/Query%20Order';
const ORDERS_V1 = '/api/resource/Query%20Order';

const variants: [string, string | undefined][] = HAS_CHANGE_COUNTER
  ? [
      ['change counter', undefined],
      ['Redis notices', 'redis://127.0.0.1:6379'],
    ]
  : [['SQLite', undefined]];

interface Order {
  name: string;
  title: string;
  cost?: number;
  pin?: string;
  lines: { item: string; qty: number }[];
}

describe.each(variants)('remembered documents (%s)', (_label, redisUrl) => {
  let t: TestSite;
  let b: Site;
  let httpB: request.Agent;
  let reader: string;
  let ownerReader: string;
  let order: string;

  beforeAll(async () => {
    t = await createTestSite({ registry: await fixtureRegistry(), ...(redisUrl ? { redisUrl } : {}) });
    b = await openSite({ ...t.site.config }, t.site.registry);
    httpB = request.agent(createApp(b, { onServerError: () => undefined }).callback());
    reader = await createUser(t, 'remembered-reader@example.com', ['Query Reader']);
    ownerReader = await createUser(t, 'remembered-owner@example.com', ['Query Owner Reader']);
    const res = await t.http
      .post(ORDERS)
      .set('Authorization', t.adminToken)
      .send({
        title: 'alpha',
        cost: 40,
        pin: 'secret-pin',
        lines: [
          { item: 'bolt', qty: 2 },
          { item: 'nut', qty: 10 },
        ],
      });
    expect(res.status).toBe(201);
    order = res.body.data.name as string;
  });
  afterAll(async () => {
    await closeSite(b);
    await t.close();
  });

  const get = (auth: string, v1 = false) =>
    t.http.get(`${v1 ? ORDERS_V1 : ORDERS}/${order}`).set('Authorization', auth);

  test('each user gets their own answer, whoever read the document first', async () => {
    for (let round = 0; round < 3; round++) {
      for (const v1 of [false, true]) {
        const admin = await get(t.adminToken, v1);
        expect(admin.status).toBe(200);
        expect(admin.body.data).toMatchObject({ title: 'alpha', cost: 40 });
        expect(admin.body.data).not.toHaveProperty('pin');
        expect((admin.body.data as Order).lines.map((l) => l.item)).toEqual(['bolt', 'nut']);
        const limited = await get(reader, v1);
        expect(limited.status).toBe(200);
        expect(limited.body.data.title).toBe('alpha');
        expect(limited.body.data).not.toHaveProperty('cost');
        expect(limited.body.data).not.toHaveProperty('pin');
        // Owned by Administrator: an if_owner reader may not read it, before or after others did.
        const owner = await get(ownerReader, v1);
        expect(owner.status).toBe(403);
      }
    }
  });

  test('a write through B, to the row or only to a child row, and a delete show in the very next GET', async () => {
    for (let round = 0; round < 10; round++) {
      await get(t.adminToken);
      const title = `alpha ${round}`;
      const put = await httpB.put(`${ORDERS}/${order}`).set('Authorization', t.adminToken).send({ title });
      expect(put.status).toBe(200);
      expect((await get(t.adminToken, round % 2 === 0)).body.data.title).toBe(title);
      // Only a child row's value changes.
      const lines = (put.body.data as Order).lines.map((l, i) => (i === 0 ? { ...l, qty: round } : l));
      const childPut = await httpB
        .put(`${ORDERS}/${order}`)
        .set('Authorization', t.adminToken)
        .send({ lines });
      expect(childPut.status).toBe(200);
      expect((await get(t.adminToken, round % 2 === 1)).body.data.lines[0].qty).toBe(round);
    }
    const extra = await t.http.post(ORDERS).set('Authorization', t.adminToken).send({ title: 'gone soon' });
    expect(extra.status).toBe(201);
    const path = `${ORDERS}/${extra.body.data.name as string}`;
    expect((await t.http.get(path).set('Authorization', t.adminToken)).status).toBe(200);
    expect((await httpB.delete(path).set('Authorization', t.adminToken)).status).toBe(202);
    expect((await t.http.get(path).set('Authorization', t.adminToken)).status).toBe(404);
  });

  test("an answer changed by its caller changes neither the remembered document nor another request's", async () => {
    const binding = t.site.registry.get('Query Order')!;
    await readDoc(t.site, binding, order); // remembered now (MariaDB): the next two are answered from memory
    const first = (await readDoc(t.site, binding, order))!;
    const before = JSON.parse(JSON.stringify(first)) as Order;
    first.title = 'changed in memory';
    (first.lines as Order['lines'])[0]!.qty = 999;
    (first.lines as Order['lines']).pop();
    const second = (await readDoc(t.site, binding, order))!;
    expect(second).toEqual(before);
    expect(second).not.toBe(first);
  });

  test('a GET answer changed by its caller (JSON value, child rows) changes neither the remembered document nor the next', async () => {
    // getDocument reads the remembered document itself: serializeDoc's copy is all that keeps it apart from the answer.
    const created = await t.http
      .post('/api/v2/document/Widget')
      .set('Authorization', t.adminToken)
      .send({ title: 'shared', payload: { a: { b: 1 }, list: [1, 2] }, parts: [{ part_name: 'p', qty: 3 }] });
    expect(created.status).toBe(201);
    const name = created.body.data.name as string;
    const admin = { name: 'Administrator', roles: new Set(['Administrator', 'System Manager']) };
    const caller = { site: t.site, user: admin, version: 2 as const };
    await getDocument(caller, 'Widget', name); // remembered now (MariaDB)
    const first = await getDocument(caller, 'Widget', name);
    const before = JSON.parse(JSON.stringify(first)) as Record<string, unknown>;
    first.title = 'changed in memory';
    const payload = first.payload as { a: { b: number }; list: number[] };
    payload.a.b = 999;
    payload.list.push(3);
    (first.parts as { qty: number }[])[0]!.qty = 999;
    const second = await getDocument(caller, 'Widget', name);
    expect(second).toEqual(before);
    expect((await readDoc(t.site, t.site.registry.get('Widget')!, name))!.payload).toEqual({
      a: { b: 1 },
      list: [1, 2],
    });
  });

  onCounter('a repeated GET reads no row; a write that skips the change counter is not seen', async () => {
    await get(t.adminToken);
    const read = jest.spyOn(t.site.rows, 'read');
    try {
      expect((await get(t.adminToken)).status).toBe(200);
      expect((await get(reader, true)).status).toBe(200);
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
    const before = (await get(t.adminToken)).body.data as Order;
    await unbumpedUpdate(t.site.config.databaseUrl!, 'tabQuery Order', order, { title: 'behind its back' });
    expect((await get(t.adminToken)).body.data.title).toBe(before.title);
    // Any write the service sees bumps the table, and the next GET reads it again.
    const other = await httpB.post(ORDERS).set('Authorization', t.adminToken).send({ title: 'another' });
    expect(other.status).toBe(201);
    expect((await get(t.adminToken)).body.data.title).toBe('behind its back');
  });
});
