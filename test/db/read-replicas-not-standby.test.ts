// A read_replicas URL of a server that replays no primary (here the test server itself: not a PostgreSQL standby, no
// MariaDB replication) is named in a warning when the site opens, since every read it was meant for falls back to the
// primary. Its reads still answer. MariaDB and PostgreSQL passes; a real standby's silence is in
// read-replicas-{mariadb,postgres}.test.ts.
import { captureLog, type CapturedLog } from '../helpers/captured-log';
import { createTestSite, DB_KIND, type TestSite } from '../helpers/test-site';

const server = process.env.TEST_POSTGRES_URL ?? process.env.TEST_MYSQL_URL;
if (DB_KIND === 'sqlite')
  console.log('read replica warning skipped: SQLite has no replicas (MariaDB and PostgreSQL passes)');
const run = DB_KIND === 'sqlite' ? describe.skip : describe;

run('a read replica that replays no primary', () => {
  let t: TestSite;
  let log: CapturedLog;
  beforeAll(async () => {
    log = captureLog('warn');
    t = await createTestSite({ site: { read_replicas: [server as string] } });
  });
  afterAll(async () => {
    await t?.close();
    log.restore();
  });

  test('is named in a warning at start, and the primary answers its reads', async () => {
    const label = new URL(server as string).host;
    const deadline = Date.now() + 5000;
    const warned = () => log.lines.find((line) => line.event === 'replica_not_replaying');
    while (!warned() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(warned()).toMatchObject({ replica: label, level: 40 });
    expect(JSON.stringify(warned())).not.toContain('@');
    const res = await t.http.get('/api/resource/ToDo').set('Authorization', t.adminToken);
    expect(res.status).toBe(200);
  });
});
