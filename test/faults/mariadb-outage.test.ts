// A private mariadbd stopped, then frozen (SIGSTOP), under load: test/helpers/outage-suite.ts says what must hold.
import knexFactory from 'knex';
import { outageSuite } from '../helpers/outage-suite';
import { HAVE_MARIADB, PrivateMariaDB } from '../helpers/private-mariadb';

// Another port for the MariaDB run, so the two suites can run at the same time.
const server = new PrivateMariaDB(process.env.TEST_MYSQL_URL ? 4181 : 4171);

jest.setTimeout(120_000);
if (HAVE_MARIADB)
  outageSuite('MariaDB outage (private mariadbd)', server, async () => {
    await server.start();
    const admin = knexFactory({ client: 'mysql2', connection: server.url('mysql') });
    await admin.raw('CREATE DATABASE IF NOT EXISTS site CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
    await admin.destroy();
    return server.url('site');
  });
else test.skip('MariaDB outage: no mariadbd on this machine', () => undefined);
