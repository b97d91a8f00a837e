// A statement queued behind one a frozen MariaDB never answers: in a group-commit batch, a work holds an insert back
// (as the row store does for a new document and its event row), then sends a knex statement, which sends the held
// insert first. mysql2 starts a statement's own timeout only when it reaches the head of the connection's queue, and a
// destroyed connection never answers what is queued on it: the work hung for good. Now it fails within the deadline
// with a 503 code, the batch's other works too, and once the server is thawed the group commit writes again.
import knexFactory, { type Knex } from 'knex';
import { connect } from '../../runtime/db/connect';
import type { MysqlDatabase } from '../../runtime/db/mysql/backend';
import { MYSQL_ERRORS } from '../../runtime/db/mysql/errors';
import { MysqlGroupCommit, deferInsert } from '../../runtime/db/mysql/group-commit';
import { mysqlConnection, type MysqlConnection } from '../../runtime/db/mysql/statements';
import { unavailableReason } from '../../runtime/db/unavailable';
import { HAVE_MARIADB, PrivateMariaDB } from '../helpers/private-mariadb';

const PORT = 4818;
const STATEMENT_MS = 1000;
const TABLE = 'queued_scratch';
const HEAD = `insert into \`${TABLE}\` (\`name\`) values `;

const run = HAVE_MARIADB ? describe : describe.skip;
jest.setTimeout(120_000);

run('a statement queued behind an unanswered one (private mariadbd, frozen)', () => {
  const server = new PrivateMariaDB(PORT);
  let db: MysqlDatabase;

  beforeAll(async () => {
    await server.start();
    const admin = knexFactory({ client: 'mysql2', connection: server.url('mysql') });
    await admin.raw('CREATE DATABASE IF NOT EXISTS ev_queued');
    await admin.destroy();
    db = connect(server.url('ev_queued'), {
      statementMs: STATEMENT_MS,
      acquireMs: STATEMENT_MS,
      busyMs: STATEMENT_MS,
    }) as MysqlDatabase;
    await db.knex.schema.dropTableIfExists(TABLE);
    await db.knex.schema.createTable(TABLE, (t) => t.string('name', 40).primary());
  });

  afterAll(async () => {
    server.thaw();
    await db?.close().catch(() => undefined);
    await server.destroy();
  });

  /** What the reads of the works failed with (the statements queued behind the held insert). */
  const readErrors: unknown[] = [];

  /** A work that holds its row back, then reads through knex (which sends the held row first); `before` runs first. */
  const heldThenRead = (name: string, before?: () => void) => async (q: Knex) => {
    const conn = (await mysqlConnection(q)) as MysqlConnection;
    before?.();
    if (!deferInsert(conn, HEAD, '(?)', [name])) throw new Error('a batch holds its inserts back');
    try {
      return await q(TABLE).where({ name }).first();
    } catch (err) {
      readErrors.push(err);
      throw err;
    }
  };

  test('healthy: the held row is seen by the read and committed', async () => {
    const group = new MysqlGroupCommit(db.writeKnex, STATEMENT_MS, 1);
    expect(await group.run(heldThenRead('before'))).toEqual({ name: 'before' });
    expect(await db.knex(TABLE).pluck('name')).toEqual(['before']);
  });

  test('frozen: the work fails with a 503 code within the deadline, not never; back after a thaw', async () => {
    const group = new MysqlGroupCommit(db.writeKnex, STATEMENT_MS, 1);
    let started = 0;
    try {
      // Frozen once the work holds its connection, so its statements go to the frozen server.
      const outcome = await group
        .run(
          heldThenRead('frozen', () => {
            started = Date.now();
            server.freeze();
          }),
        )
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      const ms = Date.now() - started;
      expect(unavailableReason(outcome, MYSQL_ERRORS)).toEqual(expect.any(String));
      // The read queued behind the held insert: failed when the connection was destroyed at the insert's deadline.
      expect(readErrors.map((err) => (err as { code?: unknown }).code)).toEqual(['PROTOCOL_CONNECTION_LOST']);
      // The work's statements (deadline), a ROLLBACK on the destroyed connection, the rerun alone (acquire timeout).
      expect(ms).toBeLessThan(3 * STATEMENT_MS + 1500);
    } finally {
      server.thaw();
    }
    const after = new MysqlGroupCommit(db.writeKnex, STATEMENT_MS, 1);
    for (const end = Date.now() + 20_000; ;) {
      try {
        expect(await after.run(heldThenRead('after'))).toEqual({ name: 'after' });
        break;
      } catch (err) {
        if (Date.now() > end) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect((await db.knex(TABLE).pluck('name')).sort()).toEqual(['after', 'before']);
  });
});
