// Remembered list pages and counts: served again while the tables they read are unchanged, never after a write, be it
// made by this site or by another site object on the same database (its own pool and cache, as another process has),
// on MariaDB and PostgreSQL with and without Redis change notices. A write that skips the change counter (a connection
// the service does not own on MariaDB, the change triggers off on PostgreSQL) is not seen: that is what proves the pages
// are remembered and the counter is what keeps them fresh. Bounded by result_cache_entries; 0 remembers nothing.
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { loadSiteConfig } from '../../runtime/config/config';
import { writtenTables } from '../../runtime/db/mysql/table-changes';
import { writtenTables as pgWrittenTables } from '../../runtime/db/postgres/table-changes';
import { changeStampsOf, tablesRead } from '../../runtime/query/result-cache';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createTestSite } from '../helpers/test-site';
import { HAS_CHANGE_COUNTER, unbumpedUpdate } from '../helpers/unbumped-write';

jest.setTimeout(120_000);
const onCounter = HAS_CHANGE_COUNTER ? test : test.skip;
const REDIS_URL = 'redis://127.0.0.1:6379';

const LIST = '/api/v2/document/ToDo';
const listQuery = {
  fields: JSON.stringify(['name', 'description', 'status']),
  filters: JSON.stringify({ status: 'Open' }),
  order_by: 'name asc',
};

describe('which tables a statement reads and writes', () => {
  test('reads: every FROM and JOIN must be a tab… table; volatile functions are refused', () => {
    expect(tablesRead('select `a` from `tabToDo` where `x` in (select `parent` from `tabHas Role`)')).toEqual(
      ['tabHas Role', 'tabToDo'],
    );
    expect(tablesRead('select * from `tabA` inner join `tabB` on `tabA`.`x` = `tabB`.`y`')).toEqual([
      'tabA',
      'tabB',
    ]);
    expect(tablesRead('select * from `__Auth`')).toBeUndefined();
    expect(tablesRead('select * from tabToDo')).toBeUndefined();
    expect(tablesRead('select * from `tabToDo` where `modified` > now()')).toBeUndefined();
    expect(tablesRead('select * from `tabToDo` order by rand ()')).toBeUndefined();
    expect(tablesRead('select 1')).toBeUndefined();
    // A column named like a keyword is no table.
    expect(tablesRead('select `from`, `from_date` from `tabX`')).toEqual(['tabX']);
  });

  test('reads on PostgreSQL: "tab…" tables; its volatile functions are refused', () => {
    expect(
      tablesRead('select "a" from "tabToDo" where "x" in (select "parent" from "tabHas Role") limit $1'),
    ).toEqual(['tabHas Role', 'tabToDo']);
    expect(
      tablesRead('select count(*) as "c" from "tabA" inner join "tabB" on "tabA"."x" = "tabB"."y"'),
    ).toEqual(['tabA', 'tabB']);
    expect(tablesRead('select * from "tabSay ""hi"" now"')).toEqual(['tabSay "hi" now']);
    expect(tablesRead('select * from "__Auth"')).toBeUndefined();
    expect(tablesRead('select * from "tabToDo" order by random()')).toBeUndefined();
    expect(tablesRead('select * from "tabToDo" where "modified" > current_timestamp')).toBeUndefined();
    expect(tablesRead(`select nextval('s') from "tabToDo"`)).toBeUndefined();
    expect(tablesRead('select "from", "from_date" from "tabX"')).toEqual(['tabX']);
  });

  test('writes on PostgreSQL: insert, update, delete, merge, DDL and data-modifying WITH name their "tab…" tables', () => {
    expect(pgWrittenTables('insert into "tabToDo" ("name") values ($1)')).toEqual(['tabToDo']);
    expect(
      pgWrittenTables('update "tabToDo" set "x" = $1 where "name" in (select "parent" from "tabA")'),
    ).toEqual(['tabToDo', 'tabA']);
    expect(pgWrittenTables('  DELETE FROM "tabToDo" where "name" = $1')).toEqual(['tabToDo']);
    expect(pgWrittenTables('truncate "tabToDo"')).toEqual(['tabToDo']);
    expect(pgWrittenTables('with d as (delete from "tabA" returning 1) select count(*) from d')).toEqual([
      'tabA',
    ]);
    expect(pgWrittenTables('with r as (select 1) select * from "tabToDo"')).toEqual([]);
    expect(pgWrittenTables('select * from "tabToDo" for update')).toEqual([]);
    expect(pgWrittenTables('create table "tabNew" ("name" varchar(140))')).toEqual([]);
    expect(pgWrittenTables('insert into "__Session" ("sid") values ($1)')).toEqual([]);
  });

  test('writes: insert, update, delete, replace and DDL name their tab… tables; reads and CREATE none', () => {
    expect(writtenTables('insert into `tabToDo` (`name`) values (?)')).toEqual(['tabToDo']);
    expect(
      writtenTables('update `tabToDo` set `x` = ? where `name` in (select `parent` from `tabA`)'),
    ).toEqual(['tabToDo', 'tabA']);
    expect(writtenTables('  DELETE FROM `tabToDo` where `name` = ?')).toEqual(['tabToDo']);
    expect(writtenTables('alter table `tabToDo` add `x` int')).toEqual(['tabToDo']);
    expect(writtenTables('select * from `tabToDo`')).toEqual([]);
    expect(writtenTables('create table `tabNew` (`name` varchar(140))')).toEqual([]);
    expect(writtenTables('insert into `__Session` (`sid`) values (?)')).toEqual([]);
  });

  test('result_cache_entries and result_cache_bytes must be whole numbers, 0 or more', () => {
    const dir = path.resolve(__dirname, '../tmp');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `result-cache-config-${process.pid}.json`);
    for (const bad of [-1, 1.5, '10', null]) {
      writeFileSync(file, JSON.stringify({ result_cache_entries: bad }));
      expect(() => loadSiteConfig(file, true)).toThrow(/result_cache_entries must be a whole number/);
    }
    writeFileSync(file, JSON.stringify({ result_cache_bytes: 0 }));
    expect(loadSiteConfig(file, true).result_cache_bytes).toBe(0);
  });
});

/** Site A (the test site) and site B: a second site object on the same database, with its own pool and cache. */
async function pair(options: { redisUrl?: string; entries?: number } = {}) {
  const t = await createTestSite({
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
    ...(options.entries !== undefined ? { site: { result_cache_entries: options.entries } } : {}),
  });
  const b: Site = await openSite({ ...t.site.config }, registry);
  const httpB = request(createApp(b, { onServerError: () => undefined }).callback());
  const names: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await t.http
      .post(LIST)
      .set('Authorization', t.adminToken)
      .send({ description: `todo ${i}`, status: 'Open' });
    expect(res.status).toBe(201);
    names.push(res.body.data.name as string);
  }
  const list = async () => {
    const res = await t.http.get(LIST).query(listQuery).set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
    return res.body.data as { name: string; description: string }[];
  };
  const count = async () => {
    const res = await t.http
      .get('/api/v2/doctype/ToDo/count')
      .query({ filters: listQuery.filters })
      .set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
    return res.body.data as number;
  };
  return {
    t,
    b,
    httpB,
    names,
    list,
    count,
    close: async () => {
      await closeSite(b);
      await t.close();
    },
  };
}

/** How many list SELECTs and COUNTs A's row store ran while `work` ran (the remembered ones run none). */
async function readsOf(site: Site, work: () => Promise<unknown>): Promise<number> {
  const select = jest.spyOn(site.rows, 'select');
  const count = jest.spyOn(site.rows, 'count');
  try {
    await work();
    return select.mock.calls.length + count.mock.calls.length;
  } finally {
    select.mockRestore();
    count.mockRestore();
  }
}

/** The reads of the change counter A made while `work` ran (the stamps of its remembered results). */
async function counterReadsOf(site: Site, work: () => Promise<unknown>): Promise<number> {
  const stamps = changeStampsOf(site)!;
  const before = stamps.counterReads;
  await work();
  return stamps.counterReads - before;
}

const variants: [string, string | undefined][] = HAS_CHANGE_COUNTER
  ? [
      ['change counter', undefined],
      ['Redis notices', REDIS_URL],
    ]
  : [['SQLite', undefined]];

describe.each(variants)('remembered lists and counts (%s)', (_label, redisUrl) => {
  let p: Awaited<ReturnType<typeof pair>>;
  beforeAll(async () => {
    p = await pair(redisUrl ? { redisUrl } : {});
  });
  afterAll(() => p.close());

  test('writes through B (update, create, delete) show at once in A', async () => {
    for (let round = 0; round < 25; round++) {
      expect((await p.list()).length).toBe(5);
      expect(await p.count()).toBe(5);
      const target = p.names[round % 5]!;
      const description = `round ${round}`;
      const put = await p.httpB
        .put(`${LIST}/${target}`)
        .set('Authorization', p.t.adminToken)
        .send({ description });
      expect(put.status).toBe(200);
      expect((await p.list()).find((r) => r.name === target)?.description).toBe(description);
      const created = await p.httpB
        .post(LIST)
        .set('Authorization', p.t.adminToken)
        .send({ description: 'extra', status: 'Open' });
      expect(created.status).toBe(201);
      expect(await p.count()).toBe(6);
      expect((await p.list()).length).toBe(6);
      const removed = await p.httpB
        .delete(`${LIST}/${created.body.data.name as string}`)
        .set('Authorization', p.t.adminToken);
      expect(removed.status).toBe(202);
      expect(await p.count()).toBe(5);
    }
  });

  onCounter(
    'a repeated list and count are answered from memory; a write by B makes A read again',
    async () => {
      const site = p.t.site;
      await p.list();
      await p.count();
      const stampReads = await counterReadsOf(site, async () =>
        expect(await readsOf(site, async () => (await p.list(), await p.count()))).toBe(0),
      );
      // With a live Redis subscription the stamp is the notices' (a PING), else one read of the counter per turn.
      expect(stampReads).toBe(redisUrl ? 0 : 2);
      const put = await p.httpB
        .put(`${LIST}/${p.names[0]}`)
        .set('Authorization', p.t.adminToken)
        .send({ description: 'changed by B' });
      expect(put.status).toBe(200);
      expect(await readsOf(site, async () => (await p.list(), await p.count()))).toBe(2);
    },
  );

  onCounter('a write that skips the change counter is not seen (the page is remembered)', async () => {
    const before = await p.list();
    await unbumpedUpdate(p.t.site.config.databaseUrl!, 'tabToDo', p.names[1]!, {
      description: 'behind its back',
    });
    expect(await p.list()).toEqual(before);
    // Any write the service sees bumps the table, and the next list is read again.
    await p.httpB.put(`${LIST}/${p.names[2]}`).set('Authorization', p.t.adminToken).send({ priority: 'Low' });
    expect((await p.list()).find((r) => r.name === p.names[1])?.description).toBe('behind its back');
  });
});

/** Pages of 2 of the list, as Administrator, each asserted 200. */
const pagesOf = (p: Awaited<ReturnType<typeof pair>>) => (start: number) =>
  p.t.http
    .get(LIST)
    .query({ ...listQuery, start, limit: 2 })
    .set('Authorization', p.t.adminToken)
    .expect(200);

describe('limits', () => {
  onCounter('result_cache_entries: 0 remembers nothing (a write behind its back is seen)', async () => {
    const p = await pair({ entries: 0 });
    try {
      await p.list();
      await unbumpedUpdate(p.t.site.config.databaseUrl!, 'tabToDo', p.names[1]!, {
        description: 'behind its back',
      });
      expect((await p.list()).find((r) => r.name === p.names[1])?.description).toBe('behind its back');
    } finally {
      await p.close();
    }
  });

  onCounter('result_cache_entries bounds the results kept, least recently used first out', async () => {
    const p = await pair({ entries: 2 });
    const site = p.t.site;
    const page = pagesOf(p);
    try {
      await page(0);
      await page(1);
      expect(await readsOf(site, () => page(0))).toBe(0); // 0 is now the most recent
      await page(2); // evicts 1
      expect(await readsOf(site, () => page(0))).toBe(0);
      expect(await readsOf(site, () => page(1))).toBe(1);
    } finally {
      await p.close();
    }
  });

  onCounter('remembered documents have their own bound: GETs of many documents evict no page', async () => {
    const p = await pair({ entries: 2 });
    const site = p.t.site;
    const page = pagesOf(p);
    try {
      await page(0);
      await page(1);
      for (const name of p.names)
        await p.t.http.get(`${LIST}/${name}`).set('Authorization', p.t.adminToken).expect(200);
      expect(await readsOf(site, async () => (await page(0), await page(1)))).toBe(0);
    } finally {
      await p.close();
    }
  });
});
