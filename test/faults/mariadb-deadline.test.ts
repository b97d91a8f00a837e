// One deadline per request on a frozen MariaDB (SIGSTOP of a private mariadbd): reads, updates (a transaction of their
// own) and creates (group commits, run again alone when their batch fails) each answer 503 within db_statement_timeout,
// not a multiple of it; ping answers meanwhile; after SIGCONT every kind succeeds again. Twice: with the statement and
// lock timeouts at 2,000 ms (the acquire timeout at its default, 5,000 ms: a wait for a connection counts in the
// call's deadline, it does not add to it), and with every timeout at its default (a create took 13 s: 8 s, then a
// rerun alone waiting 5 s for a connection).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knexFactory from 'knex';
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { HAVE_MARIADB, PrivateMariaDB, waitUntil } from '../helpers/private-mariadb';

// Ports 4800-4809 are this test's (another suite runs mariadb-outage.test.ts on its own ports).
const PORT = process.env.TEST_MYSQL_URL ? 4801 : 4800;
/** Scheduling slack on a loaded 2-core machine: a request's deadline is db_statement_timeout. */
const SLACK_MS = 1000;

const run = HAVE_MARIADB ? describe : describe.skip;
jest.setTimeout(120_000);

const SHORT = { db_statement_timeout: 2000, db_busy_timeout: 2000 };
run.each([
  ['statement and lock timeouts 2,000 ms', SHORT, 0, 2],
  ['default timeouts', {}, 2, 1],
] as const)('one deadline per request on a frozen MariaDB, %s', (_name, timeouts, portOffset, rounds) => {
  const config = { ...DEFAULT_SITE_CONFIG, ...timeouts };
  const TIMEOUT_MS = config.db_statement_timeout;
  const server = new PrivateMariaDB(PORT + portOffset);
  let site: Site;
  let listener: http.Server;
  let base: string;
  let auth: string;
  let todo: string;

  beforeAll(async () => {
    await server.start();
    const admin = knexFactory({ client: 'mysql2', connection: server.url('mysql') });
    await admin.raw('CREATE DATABASE IF NOT EXISTS site CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci');
    await admin.destroy();
    site = await openSite(
      {
        port: 0,
        host: '127.0.0.1',
        databaseUrl: server.url('site'),
        adminPassword: 'deadline-admin-1',
        adminPasswordDefaulted: false,
        site: config,
      },
      registry,
    );
    const keys = await regenerateKeys(site.db.knex, 'Administrator');
    auth = `token ${keys!.api_key}:${keys!.api_secret}`;
    listener = createApp(site, { onServerError: () => undefined }).listen(0, '127.0.0.1');
    await new Promise((r) => listener.once('listening', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.thaw();
    listener?.close();
    if (site) await closeSite(site).catch(() => undefined);
    await server.destroy();
  });

  /** One request: status, exc_type and how long it took. */
  async function call(method: 'GET' | 'POST' | 'PUT', path: string, body?: object) {
    const started = Date.now();
    const res = await fetch(base + path, {
      method,
      signal: AbortSignal.timeout(30_000),
      headers: { authorization: auth, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json().catch(() => ({}))) as { exc_type?: string; data?: { name?: string } };
    return { status: res.status, excType: json.exc_type, name: json.data?.name, ms: Date.now() - started };
  }

  /** Concurrent creates (group commits), updates (transactions of their own), gets, lists and counts. */
  const load = (round: number) =>
    Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const kind = ['create', 'update', 'get', 'list', 'count'][i % 5] as string;
        const answer =
          kind === 'create'
            ? call('POST', '/api/resource/ToDo', { description: `frozen ${round}.${i}` })
            : kind === 'update'
              ? call('PUT', `/api/resource/ToDo/${todo}`, { description: `frozen ${round}.${i}` })
              : kind === 'get'
                ? call('GET', `/api/resource/ToDo/${todo}`)
                : kind === 'list'
                  ? call(
                      'GET',
                      `/api/resource/ToDo?limit_page_length=5&filters=${encodeURIComponent(`[["description","like","%${round}.${i}%"]]`)}`,
                    )
                  : call('GET', '/api/v2/doctype/ToDo/count');
        return answer.then((a) => ({ kind, ...a }));
      }),
    );

  /** The slowest answer of each kind, for the report. */
  const slowest = (answers: { kind: string; ms: number }[]) =>
    Object.fromEntries(
      ['create', 'update', 'get', 'list', 'count'].map((kind) => [
        kind,
        Math.max(...answers.filter((a) => a.kind === kind).map((a) => a.ms)),
      ]),
    );

  test('healthy before: creates, updates and reads answer', async () => {
    const created = await call('POST', '/api/resource/ToDo', { description: 'before' });
    expect(created.status).toBe(201);
    todo = created.name as string;
    expect((await call('PUT', `/api/resource/ToDo/${todo}`, { description: 'before, changed' })).status).toBe(
      200,
    );
  });

  test('frozen: every read, update and create answers 503 within the timeout; ping answers meanwhile', async () => {
    server.freeze();
    try {
      for (let round = 1; round <= rounds; round++) {
        const pings: number[] = [];
        let loading = true;
        const pinging = (async () => {
          while (loading) {
            const started = Date.now();
            const res = await fetch(`${base}/api/method/ping`, { signal: AbortSignal.timeout(10_000) });
            expect(res.status).toBe(200);
            pings.push(Date.now() - started);
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        const answers = await load(round);
        loading = false;
        await pinging;
        console.log(
          `frozen round ${round}: slowest ms`,
          slowest(answers),
          'pings',
          pings.length,
          'max ping ms',
          Math.max(...pings),
        );
        for (const a of answers) {
          expect(a).toMatchObject({ status: 503, excType: 'ServiceUnavailableError' });
          expect(a.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
        }
        expect(pings.length).toBeGreaterThan(3);
      }
    } finally {
      server.thaw();
    }
  });

  test('thawed: creates, updates and reads succeed again', async () => {
    const started = Date.now();
    for (;;) {
      const res = await call('POST', '/api/resource/ToDo', { description: 'after' });
      if (res.status === 201) break;
      expect(res.status).toBe(503);
      if (Date.now() - started > 20_000) throw new Error('no create succeeded within 20 s of SIGCONT');
      await new Promise((r) => setTimeout(r, 250));
    }
    // The transactions whose clients gave up during the freeze end on the server by themselves: one blocked in a lock
    // wait notices its closed connection only when the wait ends. Until then they hold the row locks of the updated
    // ToDo and of the change counter's shards, which the requests below would wait for (503 after 2 s).
    const admin = knexFactory({ client: 'mysql2', connection: server.url('site') });
    try {
      await waitUntil(
        async () => {
          const [rows] = (await admin.raw(
            'select count(*) as n from information_schema.innodb_trx where trx_mysql_thread_id <> connection_id()',
          )) as [{ n: number }[]];
          return Number(rows[0]?.n) === 0;
        },
        Math.max(0, 20_000 - (Date.now() - started)),
        'no transaction of the freeze left open (within 20 s of SIGCONT)',
      );
    } finally {
      await admin.destroy();
    }
    const answers = await Promise.all([
      call('PUT', `/api/resource/ToDo/${todo}`, { description: 'after, changed' }),
      call('GET', `/api/resource/ToDo/${todo}`),
      ...Array.from({ length: 5 }, (_, i) =>
        call('POST', '/api/resource/ToDo', { description: `after ${i}` }),
      ),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 201, 201, 201, 201, 201]);
  });
});
