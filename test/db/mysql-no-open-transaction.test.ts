// The write pool's sessions run with autocommit off: a work's first statement, a read too, opens a REPEATABLE READ
// transaction that only COMMIT or ROLLBACK ends. A group-commit batch whose works all failed before writing (a failed
// Link check, a duplicate found by the unique pre-check, a refusing hook) gave its connection back with that
// transaction still open, and the next write on the connection checked against its old snapshot: a Link to a target
// deleted meanwhile was stored, one to a target created meanwhile refused. Every connection now goes back with no
// transaction open, whatever ended the batch.
import type { Knex } from 'knex';
import type { MysqlDatabase } from '../../runtime/db/mysql/backend';
import { MysqlGroupCommit } from '../../runtime/db/mysql/group-commit';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onMysql = DB_KIND === 'mysql' ? describe : describe.skip;

onMysql('a write connection goes back to the pool with no transaction open', () => {
  const table = 'tabOpen Trx Scratch';
  let t: TestSite;
  beforeAll(async () => {
    t = await createTestSite();
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => tb.string('name', 40).primary());
    await t.site.db.knex(table).insert({ name: 'taken' });
  });
  afterAll(() => t?.close());

  /**
   * The connection ids among `ids` whose session has a transaction open (InnoDB's view, from another connection). InnoDB
   * answers its INFORMATION_SCHEMA tables from a cache refreshed at most every 100 ms: the read waits past that.
   */
  const openTransactions = async (ids: Iterable<number>): Promise<number[]> => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return (
      (await t.site.db
        .knex('information_schema.innodb_trx')
        .whereIn('trx_mysql_thread_id', [...ids])
        .pluck('trx_mysql_thread_id')) as number[]
    ).map(Number);
  };

  /** A work that notes its connection's id in `ids`, then does `then`. */
  const noted =
    (ids: Set<number>, then: (q: Knex) => Promise<unknown>) =>
    async (q: Knex): Promise<unknown> => {
      const [rows] = (await q.raw('select connection_id() as id')) as [{ id: number }[]];
      ids.add(Number(rows[0]!.id));
      return then(q);
    };

  test.each<[string, (q: Knex) => Promise<unknown>]>([
    [
      'a read, then a refusal (a failed Link check)',
      async (q) => {
        await q(table).where({ name: 'ghost' }).first();
        throw new Error('Could not find ghost');
      },
    ],
    ['a duplicate key', (q) => q(table).insert({ name: 'taken' })],
    [
      'a write, then a hook that throws',
      async (q) => {
        await q(table).insert({ name: 'written' });
        throw new Error('refused after insert');
      },
    ],
  ])('works that all fail on %s', async (_shape, fail) => {
    const db = t.site.db as MysqlDatabase;
    // One lane: the works share one batch, alone ones a transaction each.
    const group = new MysqlGroupCommit(db.writeKnex, db.statementMs, 1);
    const ids = new Set<number>();
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => group.run(noted(ids, fail))));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(ids.size).toBeGreaterThan(0);
    expect(await openTransactions(ids)).toEqual([]);
    expect(await t.site.db.knex(table).pluck('name')).toEqual(['taken']);
  });

  test('creates after failed ones on the same connections see what was committed meanwhile (Link checks)', async () => {
    const todo = (role: string) =>
      t.http
        .post('/api/resource/ToDo')
        .set('Authorization', t.adminToken)
        .send({ description: `linked to ${role}`, role });
    const statuses = async (role: string) =>
      (await Promise.all([0, 1, 2, 3].map(() => todo(role)))).map((res) => res.status);
    for (let round = 0; round < 4; round++) {
      const role = `Open Trx Role ${round}`;
      expect(await statuses(`Ghost Role ${round}`)).toEqual([400, 400, 400, 400]);
      const made = await t.http
        .post('/api/resource/Role')
        .set('Authorization', t.adminToken)
        .send({ role_name: role });
      expect(made.status).toBe(201);
      // Committed before its answer: every create after it finds it.
      expect(await statuses(role)).toEqual([201, 201, 201, 201]);
      expect(await statuses(`Ghost Role ${round}b`)).toEqual([400, 400, 400, 400]);
      const gone = await t.http
        .delete(`/api/v2/document/Role/${encodeURIComponent(role)}`)
        .set('Authorization', t.adminToken);
      expect(gone.status).toBe(202);
      // Deleted before its answer: no create after it stores a Link to it.
      expect(await statuses(role)).toEqual([400, 400, 400, 400]);
      expect(Number((await t.site.db.knex('tabToDo').where({ role }).count({ n: '*' }))[0]!.n)).toBe(4);
    }
  });
});
