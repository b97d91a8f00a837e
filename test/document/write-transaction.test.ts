// Write transactions stay all-or-nothing and never interleave: concurrent writes whose hooks await and throw, a
// transaction that fails after another has started, and a query made through a transaction after it ended.
import { inWriteTransaction } from '../../runtime/db/write-transaction';
import { createDocument } from '../../runtime/operations/document-operations';
import type { Caller } from '../../runtime/document/caller';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

let t: TestSite;
let caller: Caller;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  caller = {
    site: t.site,
    user: { name: 'Administrator', roles: new Set(['Administrator', 'System Manager', 'All']) },
    version: 2,
  };
});
afterAll(() => t.close());

const titles = async (prefix: string) =>
  (
    (await t.site.db.knex('tabWidget').where('title', 'like', `${prefix}%`).select('title')) as {
      title: string;
    }[]
  )
    .map((r) => r.title)
    .sort();
const partsOf = async (prefix: string) =>
  Number(
    (
      (await t.site.db.knex('tabWidget Part').where('part_name', 'like', `${prefix}%`).count({ n: '*' })) as {
        n: number | string;
      }[]
    )[0]?.n,
  );

test('concurrent creates whose hooks throw leave exactly the others, each with all its rows', async () => {
  const hooks = ['before_insert', 'validate', 'after_insert', 'on_update'];
  const bodies = Array.from({ length: 24 }, (_, i) => {
    const title = i % 3 === 0 ? `fail:${hooks[i % hooks.length]}` : `conc-${String(i).padStart(2, '0')}`;
    return { title, parts: [{ part_name: `conc-${i}-a` }, { part_name: `conc-${i}-b` }] };
  });
  const results = await Promise.allSettled(bodies.map((body) => createDocument(caller, 'Widget', body)));
  const kept = bodies.filter((_, i) => results[i]?.status === 'fulfilled').map((b) => b.title);
  expect(kept).toEqual(bodies.filter((b) => b.title.startsWith('conc-')).map((b) => b.title));
  expect(await titles('conc-')).toEqual(kept.sort());
  expect(await titles('fail:')).toEqual([]);
  expect(await partsOf('conc-')).toBe(kept.length * 2);
});

test('a transaction that fails while another waits rolls back alone', async () => {
  const table = 'tabWidget';
  const row = (title: string) => ({
    name: title,
    title,
    creation: '2024-01-01 00:00:00',
    modified: '2024-01-01 00:00:00',
  });
  const failing = inWriteTransaction(t.site.db, async (q) => {
    await q(table).insert(row('wt-failing'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    throw new Error('refused');
  });
  const passing = inWriteTransaction(t.site.db, async (q) => {
    await q(table).insert(row('wt-passing'));
  });
  await expect(failing).rejects.toThrow('refused');
  await passing;
  expect(await titles('wt-')).toEqual(['wt-passing']);
});

test("a query through a transaction's knex after it ended is refused", async () => {
  let kept: Parameters<Parameters<typeof inWriteTransaction>[1]>[0] | undefined;
  await inWriteTransaction(t.site.db, async (q) => {
    kept = q;
  });
  await expect(kept!('tabWidget').insert({ name: 'wt-late', title: 'wt-late' })).rejects.toThrow(
    /Transaction query already complete/,
  );
  expect(await titles('wt-late')).toEqual([]);
});
