// A private PostgreSQL stopped, then frozen (SIGSTOP of the postmaster and every backend), under load, in the suite's
// PostgreSQL run: test/helpers/outage-suite.ts says what must hold.
import path from 'node:path';
import knexFactory from 'knex';
import { outageSuite } from '../helpers/outage-suite';
import { HAVE_POSTGRES, PrivatePostgres, serverUser } from '../helpers/private-postgres';

jest.setTimeout(120_000);
if (HAVE_POSTGRES && process.env.TEST_POSTGRES_URL) {
  const server = new PrivatePostgres(
    4175,
    path.resolve(__dirname, `../tmp/postgres-outage-${process.pid}`),
    serverUser(),
  );
  outageSuite('PostgreSQL outage (private postgres)', server, async () => {
    server.init();
    await server.start();
    const admin = knexFactory({ client: 'pg', connection: server.url('postgres') });
    await admin.raw(`CREATE DATABASE site ENCODING 'UTF8' TEMPLATE template0`);
    await admin.destroy();
    return server.url('site');
  });
} else
  test.skip(
    HAVE_POSTGRES
      ? 'PostgreSQL outage: runs with TEST_POSTGRES_URL (the PostgreSQL run)'
      : 'PostgreSQL outage: no PostgreSQL binaries under /usr/lib/postgresql',
    () => undefined,
  );
