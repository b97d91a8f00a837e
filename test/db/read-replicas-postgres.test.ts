// Read replicas on PostgreSQL, with a real standby: a private primary and a streaming standby made from it with
// pg_basebackup -R, started here and stopped after. A list or count right after a write, on the process that wrote or
// another, never misses it; a standby whose replay is paused (lagging) or that is killed (-9) leaves the primary to
// answer, at once and without an error; the standby's reads, the fallbacks and the lag are in /api/metrics.
// Runs in the PostgreSQL pass (TEST_POSTGRES_URL), so that the passes never start servers on the same ports.
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG, type SiteConfig } from '../../runtime/config/config';
import { replicaReadsOf } from '../../runtime/query/replica-reads';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import knexFactory from 'knex';
import request from 'supertest';
import { captureLog } from '../helpers/captured-log';
import { DB_KIND } from '../helpers/test-site';
import { HAVE_POSTGRES, PostgresReplication, waitUntil } from '../helpers/private-replicas';

const PRIMARY_PORT = 4823;
const REPLICA_PORT = 4824;
const DATABASE = 'replicas_site';
/** Longest a request may take while the replica is down: the replica's timeout, one primary read, slack. */
const BOUND_MS = 3000;

const reason = !HAVE_POSTGRES
  ? 'no PostgreSQL binaries under /usr/lib/postgresql/*/bin'
  : DB_KIND !== 'postgres'
    ? 'runs in the PostgreSQL pass (TEST_POSTGRES_URL)'
    : undefined;
if (reason) console.log(`read replicas (PostgreSQL) skipped: ${reason}`);
const run = reason ? describe.skip : describe;
jest.setTimeout(90_000);

/** One app process of the site: its site, an in-process HTTP client and Administrator's token. */
interface AppProcess {
  site: Site;
  http: ReturnType<typeof request>;
  auth: string;
}

let adminAuth: string | undefined;

async function openProcess(
  urls: { primary: string; replica: string },
  site: Partial<SiteConfig> = {},
): Promise<AppProcess> {
  const opened = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: urls.primary,
      adminPassword: 'replica-admin-1',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, read_replicas: [urls.replica], read_replica_timeout: 500, ...site },
    },
    registry,
  );
  // One key for every process: making a new one replaces the last.
  if (!adminAuth) {
    const keys = await regenerateKeys(opened.db.knex, 'Administrator');
    if (!keys) throw new Error('Administrator missing');
    adminAuth = `token ${keys.api_key}:${keys.api_secret}`;
  }
  return {
    site: opened,
    http: request(createApp(opened, { onServerError: () => undefined }).callback()),
    auth: adminAuth,
  };
}

run('read replicas on PostgreSQL (private primary and streaming standby)', () => {
  const pair = new PostgresReplication(PRIMARY_PORT, REPLICA_PORT);
  const urls = { primary: pair.url(pair.primary, DATABASE), replica: pair.url(pair.standby, DATABASE) };
  let a: AppProcess;
  let b: AppProcess;

  beforeAll(async () => {
    await pair.start(DATABASE);
    a = await openProcess(urls);
    // Another process of the same site, remembering nothing: every list it answers is a query.
    b = await openProcess(urls, { result_cache_entries: 0 });
    await pair.caughtUp();
    // Two database servers and a site's first migration: on a loaded shared machine this alone can take a minute.
  }, 180_000);

  afterAll(async () => {
    if (b) await closeSite(b.site);
    if (a) await closeSite(a.site);
    await pair.destroy();
  });

  const create = async (p: AppProcess, description: string) => {
    const res = await p.http.post('/api/resource/ToDo').set('Authorization', p.auth).send({ description });
    expect(res.status).toBe(201);
    return res.body.data.name as string;
  };
  const list = async (p: AppProcess, description: string) => {
    const started = Date.now();
    const res = await p.http
      .get('/api/resource/ToDo')
      .query({
        filters: JSON.stringify([['description', 'like', `${description}%`]]),
        limit_page_length: 1000,
      })
      .set('Authorization', p.auth);
    expect(res.status).toBe(200);
    return { names: (res.body.data as { name: string }[]).map((r) => r.name), ms: Date.now() - started };
  };
  const count = async (p: AppProcess, description: string) => {
    const res = await p.http
      .get('/api/v2/doctype/ToDo/count')
      .query({ filters: JSON.stringify([['description', 'like', `${description}%`]]) })
      .set('Authorization', p.auth);
    expect(res.status).toBe(200);
    return Number(res.body.data);
  };
  const replicaReads = (p: AppProcess) => replicaReadsOf(p.site)?.states()[0]?.reads ?? 0;

  test('a replica URL of another kind than DATABASE_URL is refused at start', async () => {
    await expect(
      openProcess({ primary: urls.primary, replica: 'mysql://root@127.0.0.1:1/x' }),
    ).rejects.toThrow(/read_replicas: each entry must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });

  test('a streaming standby draws no warning that it replays no primary', async () => {
    const log = captureLog('warn');
    try {
      await replicaReadsOf(a.site)?.warnIfNotReplaying();
    } finally {
      log.restore();
    }
    expect(log.lines.filter((line) => line.event === 'replica_not_replaying')).toEqual([]);
  });

  test('a list or count after a write, on the writing process or another, always holds it', async () => {
    const before = replicaReads(a) + replicaReads(b);
    const written: string[] = [];
    for (let i = 0; i < 16; i++) {
      written.push(await create(i % 2 ? b : a, `fresh-${i}`));
      // Right after the write, and after a pause. On one machine a replica mostly applies a write within the
      // request's own latency; the lagging test below is the one that holds it back.
      if (i % 3 === 2) await new Promise((r) => setTimeout(r, 30));
      for (const p of [a, b]) {
        expect((await list(p, 'fresh-')).names.sort()).toEqual([...written].sort());
        expect(await count(p, 'fresh-')).toBe(written.length);
      }
    }
    await pair.caughtUp();
    await list(b, 'fresh-');
    // The replica answered reads, and says so in /api/metrics.
    expect(replicaReads(a) + replicaReads(b)).toBeGreaterThan(before);
    const metrics = await b.http.get('/api/metrics').set('Authorization', b.auth);
    expect(metrics.text).toMatch(
      new RegExp(`svc_db_replica_reads_total\\{replica="127.0.0.1:${REPLICA_PORT}"\\} [1-9]`),
    );
    expect(metrics.text).toMatch(
      new RegExp(`svc_db_replica_lag_seconds\\{replica="127.0.0.1:${REPLICA_PORT}"\\} 0`),
    );
  });

  test('a lagging standby (replay paused): the primary answers, fresh', async () => {
    await pair.onStandby((k) => k.raw('select pg_wal_replay_pause()'));
    try {
      const fallbacks = replicaReadsOf(b.site)!.fallbacks.lag;
      const reads = replicaReads(b);
      const name = await create(a, 'lagging-1');
      expect((await list(b, 'lagging-')).names).toEqual([name]);
      expect(await count(b, 'lagging-')).toBe(1);
      expect(replicaReads(b)).toBe(reads);
      expect(replicaReadsOf(b.site)!.fallbacks.lag).toBeGreaterThan(fallbacks);
      const metrics = await b.http.get('/api/metrics').set('Authorization', b.auth);
      expect(metrics.text).toMatch(/svc_db_replica_fallbacks_total\{reason="lag"\} [1-9]/);
      // Behind by the time since the last transaction it replayed.
      expect(metrics.text).toMatch(
        new RegExp(`svc_db_replica_lag_seconds\\{replica="127.0.0.1:${REPLICA_PORT}"\\} [0-9]`),
      );
    } finally {
      await pair.onStandby((k) => k.raw('select pg_wal_replay_resume()'));
    }
    await pair.caughtUp();
    // The standby is used again once it has replayed the primary's WAL (WAL the primary writes meanwhile, unflushed
    // for up to wal_writer_delay, may send a read or two to the primary first).
    const reads = replicaReads(b);
    const until = Date.now() + 5000;
    do expect((await list(b, 'lagging-')).names).toHaveLength(1);
    while (replicaReads(b) === reads && Date.now() < until);
    expect(replicaReads(b)).toBe(reads + 1);
  });

  test('a standby killed (-9): the primary answers every read at once, then the standby is used again', async () => {
    const names = [await create(a, 'killed-1')];
    await pair.caughtUp();
    await pair.standby.kill();
    try {
      names.push(await create(a, 'killed-2'));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => list(i % 2 ? a : b, 'killed-')));
      for (const answer of answers) {
        expect(answer.names.sort()).toEqual([...names].sort());
        expect(answer.ms).toBeLessThan(BOUND_MS);
      }
      expect(await count(b, 'killed-')).toBe(2);
      const metrics = await b.http.get('/api/metrics').set('Authorization', b.auth);
      expect(metrics.text).toMatch(
        new RegExp(`svc_db_replica_up\\{replica="127.0.0.1:${REPLICA_PORT}"\\} 0`),
      );
      expect(metrics.text).toMatch(/svc_db_replica_fallbacks_total\{reason="down"\} [1-9]/);
      // Still down past the second it is left out, while no read has found it back.
      await new Promise((r) => setTimeout(r, 1200));
      const later = await b.http.get('/api/metrics').set('Authorization', b.auth);
      expect(later.text).toMatch(new RegExp(`svc_db_replica_up\\{replica="127.0.0.1:${REPLICA_PORT}"\\} 0`));
    } finally {
      await pair.standby.start();
    }
    await pair.caughtUp();
    // Left out for a second after its failure, then tried again.
    await waitUntil(
      async () => {
        const reads = replicaReads(b);
        await list(b, 'killed-');
        return replicaReads(b) > reads;
      },
      10_000,
      'replica used again',
    );
    expect((await list(b, 'killed-')).names).toHaveLength(2);
  });

  test('a read the standby cancels for what it replays (recovery conflict): the primary answers it', async () => {
    const conflict = () => replicaReadsOf(b.site)!.fallbacks.conflict;
    await pair.onStandby(async (k) => {
      await k.raw('alter system set max_standby_streaming_delay = 0');
      await k.raw('select pg_reload_conf()');
    });
    const primary = knexFactory({ client: 'pg', connection: urls.primary });
    let locking = true;
    try {
      // Rows enough for a count on the standby to take a while, and an exclusive lock replayed meanwhile.
      await primary.raw(
        `insert into "tabToDo" (name, description, docstatus, idx)
         select 'conflict-' || g, 'conflict-' || g, 0, 0 from generate_series(1, 200000) g`,
      );
      await pair.caughtUp();
      const locks = (async () => {
        while (locking) {
          await primary.transaction((trx) => trx.raw('lock table "tabToDo" in access exclusive mode'));
          // Time for the standby to replay it, so that reads go to it again (else they wait for no lag).
          await new Promise((r) => setTimeout(r, 150));
        }
      })();
      for (let i = 0; i < 80 && !conflict(); i++) expect(await count(b, `conflict-%${i}`)).toBeGreaterThan(0);
      locking = false;
      await locks;
      expect(conflict()).toBeGreaterThan(0);
      // The standby stays in: a conflict is no outage.
      expect(replicaReadsOf(b.site)!.states()[0]?.up).toBe(true);
    } finally {
      locking = false;
      await primary.raw(`delete from "tabToDo" where name like 'conflict-%'`);
      await primary.destroy();
      await pair.onStandby(async (k) => {
        await k.raw('alter system reset max_standby_streaming_delay');
        await k.raw('select pg_reload_conf()');
      });
    }
  });
});
