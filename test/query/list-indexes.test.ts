// Indexes that keep lists fast as tables grow: creation, modified, search_index fields, the DocType's sort_field and
// child tables' parent (a Link is not indexed for being a Link, as in Frappe); a migration adds an index a table is missing.
import { migrate, indexName, SYSTEM_TABLES } from '../../runtime/db/migrate';
import { fixtureRegistry } from '../helpers/fixture-registry';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

let t: TestSite;
beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
});
afterAll(() => t.close());

async function indexes(table: string): Promise<string[]> {
  const knex = t.site.db.knex;
  const rows =
    DB_KIND === 'sqlite'
      ? await knex('sqlite_master').select({ name: 'name' }).where({ type: 'index', tbl_name: table })
      : DB_KIND === 'postgres'
        ? await knex('pg_indexes').select({ name: 'indexname' }).where('tablename', table)
        : await knex('information_schema.statistics')
            .select({ name: 'index_name' })
            .where('table_name', table)
            .andWhere('table_schema', knex.raw('database()'));
  return [...new Set((rows as { name: string }[]).map((r) => r.name))];
}

test('a parent table indexes creation, modified, its search_index fields and its sort_field, and no other Link', async () => {
  const have = await indexes('tabQuery Order');
  for (const column of ['creation', 'modified', 'customer', 'amount'])
    expect(have).toContain(indexName('tabQuery Order', column));
  expect(have).not.toContain(indexName('tabQuery Order', 'assigned_to'));
  const todo = await indexes('tabToDo');
  expect(todo).toEqual(expect.arrayContaining(['creation', 'modified'].map((c) => indexName('tabToDo', c))));
  expect(todo).not.toContain(indexName('tabToDo', 'allocated_to'));
});

test('a child table indexes parent', async () => {
  expect(await indexes('tabQuery Order Line')).toContain(indexName('tabQuery Order Line', 'parent'));
});

test('migrating an existing table adds a missing index', async () => {
  const knex = t.site.db.knex;
  const name = indexName('tabQuery Order', 'amount');
  await knex.schema.alterTable('tabQuery Order', (table) => table.dropIndex(['amount'], name));
  expect(await indexes('tabQuery Order')).not.toContain(name);
  await knex(SYSTEM_TABLES.schema).where({ doctype: 'Query Order' }).delete();
  const meta = t.site.registry.get('Query Order')?.meta;
  if (!meta) throw new Error('Query Order missing');
  const result = await migrate(t.site.db, [meta]);
  expect(result.changed).toEqual(['Query Order']);
  expect(await indexes('tabQuery Order')).toContain(name);
});

test('search_index indexes a column of any type but the long texts, as in Frappe: a Datetime too', async () => {
  // Webhook Request Log's next_retry: the look for due deliveries (webhooks/dispatcher.ts) reads it every 5 s.
  const table = 'tabWebhook Request Log';
  expect(await indexes(table)).toContain(indexName(table, 'next_retry'));
  if (DB_KIND !== 'sqlite') return;
  const plan = (await t.site.db.knex.raw(
    `explain query plan select name from "${table}" where status = 'Queued' and next_retry <= ? order by next_retry limit 100`,
    ['2026-01-01 00:00:00'],
  )) as { detail: string }[];
  expect(plan.map((row) => row.detail).join('\n')).toContain(`USING INDEX ${indexName(table, 'next_retry')}`);
});
