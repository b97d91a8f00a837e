// A create the server rolls back to break a deadlock is run again, not answered 500: in a batch it runs again alone with
// the batch's other works (as after any failed statement), and run alone it runs alone once more; a third loss is
// answered with the deadlock, which the error handler makes a 503 with Retry-After (the database is not down). One lane
// here, and each deadlock is made on purpose against another transaction, so the runs do not depend on timing.
import type { Knex } from 'knex';
import Koa from 'koa';
import request from 'supertest';
import type { BatchLanes } from '../../runtime/db/batch-lanes';
import type { MysqlDatabase } from '../../runtime/db/mysql/backend';
import { MysqlGroupCommit } from '../../runtime/db/mysql/group-commit';
import { PostgresGroupCommit } from '../../runtime/db/postgres/group-commit';
import { createErrorHandler } from '../../runtime/middleware/error-handler';
import { connectionOf, waitingForLock } from '../helpers/lock-waits';
import { DB_KIND, createTestSite, type TestSite } from '../helpers/test-site';

const onServer = DB_KIND === 'sqlite' ? describe.skip : describe;

onServer('group commit: a deadlock victim runs again', () => {
  const table = 'tabGcd Scratch';
  let t: TestSite;
  /** The other transactions' last statements, settled once the victim's rollback frees them. */
  const others: Promise<unknown>[] = [];
  beforeAll(async () => {
    t = await createTestSite({ site: { db_busy_timeout: 20_000 } });
    await t.site.db.knex.schema.dropTableIfExists(table);
    await t.site.db.knex.schema.createTable(table, (tb) => {
      tb.string('name', 40).primary();
      tb.integer('n');
    });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.site.db.knex(table).delete();
    await t.site.db.knex(table).insert([
      { name: 'a', n: 0 },
      { name: 'b', n: 0 },
    ]);
  });

  /** A group commit of one lane on the site's write connections. */
  const groupCommit = (): BatchLanes =>
    DB_KIND === 'mysql'
      ? new MysqlGroupCommit(
          (t.site.db as MysqlDatabase).writeKnex,
          (t.site.db as MysqlDatabase).statementMs,
          1,
        )
      : new PostgresGroupCommit(t.site.db.knex, 8000, 1);

  /**
   * Locks row a in `q`'s transaction, then waits for row b, which another transaction holds and which then waits for a:
   * `q`'s transaction is the victim (it waited first, which PostgreSQL's check finds first; it is the lighter one, which
   * InnoDB rolls back).
   */
  async function loseDeadlock(q: Knex, run: number): Promise<void> {
    const other = await t.site.db.knex.transaction();
    await other(table).insert(Array.from({ length: 50 }, (_, i) => ({ name: `w${run}-${i}`, n: 0 })));
    await other(table).where({ name: 'b' }).update({ n: 1 });
    await q(table).where({ name: 'a' }).update({ n: run });
    const id = await connectionOf(q);
    const mine = q(table)
      .where({ name: 'b' })
      .update({ n: run })
      .then(() => undefined);
    // `q` waits first, however slow a loaded machine is to send its statement.
    await waitingForLock(t.site.db.knex, id);
    others.push(
      other(table)
        .where({ name: 'a' })
        .update({ n: -1 })
        .finally(() => other.rollback()),
    );
    await mine;
  }

  /** A work that loses a deadlock on its first `losses` runs, then sets a to 100; counts its runs in `runs`. */
  const work = (losses: number, runs: { n: number }) => async (q: Knex) => {
    runs.n++;
    if (runs.n <= losses) await loseDeadlock(q, runs.n);
    await q(table).where({ name: 'a' }).update({ n: 100 });
    return 'stored';
  };

  test('lost twice (in its batch, then alone): the third run commits', async () => {
    const runs = { n: 0 };
    await expect(groupCommit().run(work(2, runs))).resolves.toBe('stored');
    await Promise.allSettled(others.splice(0));
    expect(runs.n).toBe(3);
    expect((await t.site.db.knex(table).where({ name: 'a' }).first()).n).toBe(100);
  });

  test('lost three times: answered with the deadlock, 503 with Retry-After and no outage', async () => {
    const runs = { n: 0 };
    const outcome = await Promise.allSettled([groupCommit().run(work(3, runs))]);
    await Promise.allSettled(others.splice(0));
    expect(runs.n).toBe(3);
    expect(outcome[0]!.status).toBe('rejected');
    const reason = (outcome[0] as PromiseRejectedResult).reason as { code?: string };
    expect(t.site.db.errors.isDeadlock(reason)).toBe(true);
    expect((await t.site.db.knex(table).where({ name: 'a' }).first()).n).toBe(0);

    const app = new Koa();
    const serverErrors: unknown[] = [];
    app.use(createErrorHandler({ developerMode: false, onServerError: (err) => serverErrors.push(err) }));
    app.use((ctx) => {
      ctx.state.site = t.site;
      throw reason;
    });
    const res = await request(app.callback()).post('/api/v2/document/ToDo').send({});
    expect([res.status, res.headers['retry-after'], res.body.exc_type]).toEqual([
      503,
      '1',
      'ServiceUnavailableError',
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/deadlock/i);
    expect(serverErrors).toEqual([]);
    // A deadlock is not an outage: the database's health is not told.
    expect(t.site.db.health.state.up).toBe(true);
  });
});
