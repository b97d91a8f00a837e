// Group commit on MariaDB: the works that queue while a lane is busy share its transaction, each rolled back alone when
// it throws, none settled before the COMMIT; a transaction the server ends, or a COMMIT that fails, fails the works
// released into it and no others. One lane here, so which works share a batch does not depend on timing.
import knexFactory, { type Knex } from 'knex';
import { BatchRolledBackError } from '../../runtime/db/group-commit';
import { MysqlGroupCommit } from '../../runtime/db/mysql-group-commit';
import { CHANGE_SHARDS, CHANGE_TABLE } from '../../runtime/db/table-changes';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onMysql = DB_KIND === 'mysql' ? describe : describe.skip;

onMysql('MysqlGroupCommit', () => {
  const table = 'tabMgc Scratch';
  let t: TestSite;
  let group: MysqlGroupCommit;
  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: 300 } });
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => tb.string('name', 40).primary());
    // Change versions for the scratch table, so that its writes' bumps have rows to lock.
    await t.site.db
      .knex(CHANGE_TABLE)
      .insert(Array.from({ length: CHANGE_SHARDS }, (_, shard) => ({ tab: table, shard, version: 0 })));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.site.db.knex(table).delete();
    group = new MysqlGroupCommit(t.site.db.writeKnex as Knex, t.site.db.statementMs, 1);
  });

  /** The committed rows, as another connection sees them. */
  const committed = async () => (await t.site.db.knex(table).pluck('name')).sort();
  const insert = (name: string) => (q: Knex) => q(table).insert({ name });

  test('works queued behind a running one share its transaction: each sees the ones before it, nothing is visible or settled before the COMMIT', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const settled: string[] = [];
    const seen: unknown[] = [];
    const a = group
      .run(async (q) => {
        await q(table).insert({ name: 'a' });
        await gate;
      })
      .then(() => settled.push('a'));
    const b = group
      .run(async (q) => {
        await q(table).insert({ name: 'b' });
        seen.push((await q(table).orderBy('name').pluck('name')) as string[], await committed());
      })
      .then(() => settled.push('b'));
    const c = group
      .run(async (q) => {
        await q(table).insert({ name: 'c' });
        seen.push([...settled]);
        return 'c done';
      })
      .then((result) => {
        settled.push('c');
        return result;
      });
    open();
    await Promise.all([a, b]);
    expect(await c).toBe('c done');
    expect(seen).toEqual([['a', 'b'], [], []]);
    expect(await committed()).toEqual(['a', 'b', 'c']);
  });

  test('a throwing work is rolled back alone, first of its batch or not; the others commit', async () => {
    const works = [
      group.run(async (q) => {
        await q(table).insert({ name: 'a' });
        throw new Error('a refused');
      }),
      group.run(insert('b')),
      group.run(async (q) => {
        await q(table).insert({ name: 'c' });
        throw new Error('c refused');
      }),
      group.run(insert('d')),
    ];
    const outcomes = await Promise.allSettled(works);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('c refused');
    expect(await committed()).toEqual(['b', 'd']);
  });

  test('a transaction the server ended under a work: works released into it reject as rolled back, later ones commit', async () => {
    const a = group.run(insert('a'));
    const b = group.run(async (q) => {
      await q(table).insert({ name: 'b' });
      await q.raw('ROLLBACK');
      throw new Error('the transaction ended');
    });
    const c = group.run(insert('c'));
    await expect(a).rejects.toBeInstanceOf(BatchRolledBackError);
    await expect(b).rejects.toThrow('the transaction ended');
    await c;
    expect(await committed()).toEqual(['c']);
  });

  test('a COMMIT that fails (its change bump waits past db_busy_timeout) rejects every work of the batch and keeps none', async () => {
    const other: Knex = knexFactory({ client: 'mysql2', connection: t.site.config.databaseUrl as string });
    const trx = await other.transaction();
    try {
      await trx(CHANGE_TABLE).where({ tab: table }).forUpdate().select('shard');
      const outcomes = await Promise.allSettled([group.run(insert('a')), group.run(insert('b'))]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    } finally {
      await trx.rollback();
      await other.destroy();
    }
    expect(await committed()).toEqual([]);
    // The lane goes on with a connection of its own: the next batch commits.
    await Promise.all([group.run(insert('c')), group.run(insert('d'))]);
    expect(await committed()).toEqual(['c', 'd']);
  });

  test('concurrent creates through the API (several lanes): every acknowledged name is stored once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.http
          .post('/api/resource/ToDo')
          .set('Authorization', t.adminToken)
          .send({ description: `group commit ${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(201));
    const names = answers.map((a) => a.body.data.name as string).sort();
    const stored = (
      (await t.site.db
        .knex('tabToDo')
        .where('description', 'like', 'group commit %')
        .pluck('name')) as string[]
    ).sort();
    expect(stored).toEqual(names);
  });
});
