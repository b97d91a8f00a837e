// The outage suite every database backend's server runs (test/faults/<backend>-outage.test.ts): a private server (own
// port and data folder) is stopped, then frozen with SIGSTOP, under concurrent load. Every request answers 503
// ServiceUnavailableError with Retry-After within the configured timeouts (never 500, never a hang), the outage logs
// one line when it starts and one when it ends, and the service answers 200 again once the server is back, without a
// restart. A realtime socket's handshake that needs the database is refused as 503 too, not as bad credentials.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { io as connect } from 'socket.io-client';
import { attachRealtime, createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG } from '../../runtime/config/config';
import type { Site } from '../../runtime/site';
import { registry } from '../../generated';
import { captureLog, type CapturedLog } from './captured-log';

export const TIMEOUT_MS = 1500;
/** The longest a request may take during an outage: a pool wait plus one statement, and scheduling slack. */
const BOUND_MS = 2 * TIMEOUT_MS + 1500;

/** A private database server the suite stops, starts, freezes and thaws. */
export interface OutageServer {
  /** Starts the server (the first time, or again after `stop`). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP to every process of the server. */
  freeze(): void;
  thaw(): void;
  /** Stops the server and removes its data. */
  destroy(): Promise<void>;
}

/**
 * The suite on `server`; `open` starts it the first time and makes the site's database, resolving with its
 * DATABASE_URL.
 */
export function outageSuite(title: string, server: OutageServer, open: () => Promise<string>): void {
  describe(title, () => {
    let site: Site;
    let listener: http.Server;
    let base: string;
    let auth: string;
    /** A key no request has used yet: its handshake reads the database (no credential cache holds it). */
    let freshAuth: string;
    let realtime: { close(): void } | undefined;
    let log: CapturedLog;

    beforeAll(async () => {
      const databaseUrl = await open();
      log = captureLog();
      site = await openSite(
        {
          port: 0,
          host: '127.0.0.1',
          databaseUrl,
          adminPassword: 'outage-admin-1',
          adminPasswordDefaulted: false,
          site: {
            ...DEFAULT_SITE_CONFIG,
            db_statement_timeout: TIMEOUT_MS,
            db_acquire_timeout: TIMEOUT_MS,
            db_busy_timeout: TIMEOUT_MS,
            // A bulk request of 150 documents runs in the request (its windows of items), not as a job.
            bulk_operation_async_threshold: 1000,
          },
        },
        registry,
      );
      const keys = await regenerateKeys(site.db.knex, 'Administrator');
      auth = `token ${keys!.api_key}:${keys!.api_secret}`;
      listener = http.createServer(createApp(site, { onServerError: () => undefined }).callback());
      realtime = attachRealtime(listener, site, { authHooks: [] });
      listener.listen(0, '127.0.0.1');
      await new Promise((r) => listener.once('listening', r));
      base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      server.thaw();
      realtime?.close();
      listener?.closeAllConnections();
      listener?.close();
      if (site) await closeSite(site).catch(() => undefined);
      await server.destroy();
      log?.restore();
    });

    /** One request: status, Retry-After, exc_type and how long it took. */
    async function call(method: 'GET' | 'POST', path: string, body?: object) {
      const started = Date.now();
      const res = await fetch(base + path, {
        method,
        // A request that hangs fails the test here, naming itself, instead of the test's own timeout.
        signal: AbortSignal.timeout(30_000),
        headers: { authorization: auth, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json().catch(() => ({}))) as { exc_type?: string };
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        excType: json.exc_type,
        ms: Date.now() - started,
      };
    }

    /**
     * 24 concurrent requests: lists, counts, creates, and with `bulk` bulk inserts run in the request, one of them of
     * 150 documents (three windows of items: those after the first window's outage fail at once, not a window each).
     */
    const load = (bulk = false) =>
      Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          i % 4 === 0
            ? call('POST', '/api/resource/ToDo', { description: `during outage ${i}` })
            : i % 4 === 1
              ? call('GET', '/api/v2/doctype/ToDo/count')
              : bulk && i % 8 === 2
                ? call('POST', '/api/v2/document/ToDo/bulk_insert', {
                    docs: Array.from({ length: i === 2 ? 150 : 2 }, (_, n) => ({
                      description: `bulk ${i} ${n}`,
                    })),
                  })
                : call('GET', '/api/resource/ToDo?limit_page_length=5'),
        ),
      );

    async function untilHealthy(ms = 20_000): Promise<number> {
      const started = Date.now();
      for (;;) {
        const res = await call('GET', '/api/resource/ToDo?limit_page_length=1');
        if (res.status === 200) return Date.now() - started;
        expect(res.status).toBe(503);
        if (Date.now() - started > ms) throw new Error(`not healthy after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }

    const events = () => log.lines.map((l) => l.event).filter(Boolean);

    /** A socket handshake with `authorization`: `connect`, or the connect_error's message and data. */
    function handshake(authorization: string): Promise<{ ms: number; message?: string; data?: unknown }> {
      const started = Date.now();
      const socket = connect(base, {
        path: '/socket.io',
        transports: ['websocket'],
        extraHeaders: { authorization },
        reconnection: false,
        forceNew: true,
      });
      return new Promise((resolve) => {
        socket.once('connect', () => {
          socket.disconnect();
          resolve({ ms: Date.now() - started });
        });
        socket.once('connect_error', (err: Error & { data?: unknown }) => {
          socket.disconnect();
          resolve({ ms: Date.now() - started, message: err.message, data: err.data });
        });
      });
    }

    test('healthy before: 200', async () => {
      expect((await call('POST', '/api/resource/ToDo', { description: 'before' })).status).toBe(201);
      expect((await call('GET', '/api/resource/ToDo')).status).toBe(200);
      const user = await fetch(`${base}/api/resource/User`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'socket@outage.test', first_name: 'Socket' }),
      });
      expect(user.status).toBe(201);
      const keys = await regenerateKeys(site.db.knex, 'socket@outage.test');
      freshAuth = `token ${keys!.api_key}:${keys!.api_secret}`;
    });

    test('server stopped: every request is 503 with Retry-After within the bound; back after a restart', async () => {
      log.lines.length = 0;
      await server.stop();
      const answers = await load(true);
      for (const a of answers) {
        expect(a).toMatchObject({ status: 503, excType: 'ServiceUnavailableError' });
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
        expect(a.ms).toBeLessThan(BOUND_MS);
      }
      expect(events()).toEqual(['database_unavailable']);
      const socket = await handshake(freshAuth);
      expect(socket).toMatchObject({ data: { status: 503, exc_type: 'ServiceUnavailableError' } });
      expect(socket.ms).toBeLessThan(BOUND_MS);
      const probes = await Promise.all(['/api/health', '/api/ready'].map((p) => fetch(base + p)));
      expect(probes.map((r) => r.status)).toEqual([200, 503]);
      expect(await probes[1]!.json()).toMatchObject({ status: 'unavailable', database: 'down' });
      await server.start();
      await untilHealthy();
      expect((await call('POST', '/api/resource/ToDo', { description: 'after restart' })).status).toBe(201);
      expect((await fetch(`${base}/api/ready`)).status).toBe(200);
      // The probe noticed the recovery: one line for the start of the outage, one for its end.
      await new Promise((r) => setTimeout(r, 1500));
      expect(events()).toEqual(['database_unavailable', 'database_available']);
    });

    test('server frozen (SIGSTOP): 503 within the bound, not a hang; back after SIGCONT', async () => {
      log.lines.length = 0;
      server.freeze();
      try {
        const answers = await load(true);
        for (const a of answers) {
          expect(a).toMatchObject({ status: 503, excType: 'ServiceUnavailableError' });
          expect(a.ms).toBeLessThan(BOUND_MS);
        }
        // Still frozen: later requests keep answering within the bound.
        const again = await load();
        for (const a of again) expect(a.ms).toBeLessThan(BOUND_MS);
        expect(events()).toEqual(['database_unavailable']);
      } finally {
        server.thaw();
      }
      await untilHealthy();
      await new Promise((r) => setTimeout(r, 1500));
      expect(events()).toEqual(['database_unavailable', 'database_available']);
      expect((await call('GET', '/api/resource/ToDo')).status).toBe(200);
    });
  });
}
