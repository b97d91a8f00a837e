// Hole (h): a database error logs the SQL with `?` placeholders, never the bound values (a session's CSRF token,
// a filter value, a password), and its answer is the usual 500 without SQL.
import { runInNewContext } from 'node:vm';
import request from 'supertest';
import { createApp } from '../../runtime/app';
import { describeError } from '../../runtime/errors/log-error';
import { captureLog, type CapturedLog } from '../helpers/captured-log';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let log: CapturedLog;
let http: ReturnType<typeof request>;
beforeAll(async () => {
  t = await createTestSite();
  await createUser(t, 'logged@example.com', ['System Manager'], 'logged-password-1');
  http = request(createApp(t.site).callback());
});
beforeEach(() => (log = captureLog()));
afterEach(() => log.restore());
afterAll(() => t.close());

test('a failing list query logs the SQL without the filter value it bound', async () => {
  await t.site.db.knex.schema.renameTable('tabNote', 'tabNote_moved');
  try {
    const res = await http
      .get('/api/resource/Note')
      .query({ filters: JSON.stringify([['title', '=', 'BOUND-SECRET-VALUE-7']]) })
      .set('Authorization', t.adminToken);
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toMatch(/select|BOUND-SECRET/i);
  } finally {
    await t.site.db.knex.schema.renameTable('tabNote_moved', 'tabNote');
  }
  const text = JSON.stringify(log.lines);
  expect(text).toMatch(/tabNote/);
  expect(text).not.toContain('BOUND-SECRET-VALUE-7');
});

test("a failing session insert at login logs neither the session's CSRF token, its sid nor the password", async () => {
  await t.site.db.knex.schema.renameTable('tabSessions', 'tabSessions_moved');
  try {
    const res = await http
      .post('/api/method/login')
      .send({ usr: 'logged@example.com', pwd: 'logged-password-1' });
    expect(res.status).toBe(500);
  } finally {
    await t.site.db.knex.schema.renameTable('tabSessions_moved', 'tabSessions');
  }
  const text = JSON.stringify(log.lines);
  expect(text).toMatch(/insert/i);
  expect(text).not.toMatch(/[0-9a-f]{48}/);
  expect(text).not.toContain('logged-password-1');
});

test('describeError keeps class, codes and frames, drops sql and bindings, masks quoted literals', () => {
  const err = Object.assign(
    new Error("insert into `t` (`a`) values (?) - Duplicate entry 'tok-123' for key 'a'"),
    {
      code: 'ER_DUP_ENTRY',
      sql: "insert into `t` (`a`) values ('tok-123')",
      bindings: ['tok-123'],
    },
  );
  const text = describeError(err);
  expect(text).toContain('ER_DUP_ENTRY');
  expect(text).toContain('insert into `t`');
  expect(text).toMatch(/\n\s+at /);
  expect(text).not.toContain('tok-123');
});

test('describeError reads an error of another realm (a driver, a vm context) as an error', () => {
  const foreign = runInNewContext(
    "Object.assign(new Error(\"no such table: tabX - 'v'\"), { code: 'SQLITE_ERROR' })",
  );
  expect(foreign instanceof Error).toBe(false);
  expect(describeError(foreign)).toMatch(/^Error: no such table: tabX - '\?' \(code=SQLITE_ERROR\)/);
});
