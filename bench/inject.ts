// In-process cost of one request: `npx tsx bench/inject.ts [method|get|get-v2|list-v1|list-v2|count|create] [N]`.
// Drives the app's callback with in-memory sockets (no network, no load generator, no second core), so the server's
// own CPU per request can be compared between two versions of the code on a busy machine; `BARE=1` answers every GET
// with a bare Koa hello-world instead, the floor of this harness. Needs a registry with bench/doctypes (the method):
// `npx tsx generator/cli.ts --doctypes doctypes --doctypes bench/doctypes --out bench/tmp/feature-gen` (or SVC_GENERATED).
// Prints the minimum and median of REPS (default 10) runs of N requests (default 3000), 16 in flight.
// INJECT_SCRIPT (JSON fields): a Server Script saved first as Administrator, e.g. a Before Save script for `create`;
// INJECT_BODY: the create's body instead of {"description":"inject"}. INJECT_DB_URL: a MariaDB database (mysql://…/name,
// created empty beforehand) instead of a fresh SQLite file. INJECT_PROFILE=file: a CPU profile of the measured runs;
// INJECT_HEAP=file: a sampling heap profile of them that counts the objects collected since (bytes allocated per request).
// INJECT_LOG=1: System Settings log_api_requests on for the runs; INJECT_LOG=toggle: off and on between runs, the runs
// without it reported apart with the paired difference (what the request log costs per request, as INJECT_TOGGLE).
// INJECT_WEBHOOK=toggle (create): a signed Webhook on ToDo after_insert to a receiver answering 204 in a child process,
// disabled and enabled between runs; each run's time includes its deliveries (it ends when no log row is Queued), so
// the paired difference is what a create with one webhook costs this process, its delivery included.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Duplex } from 'node:stream';
import { PerformanceObserver } from 'node:perf_hooks';
import Koa from 'koa';
import { createApp } from '../runtime/app';
import { regenerateKeys } from '../runtime/auth/api-keys';
import { closeSite, openSite } from '../runtime/bootstrap';
import { loadRegistry } from '../runtime/cli/load-registry';
import { DEFAULT_SITE_CONFIG } from '../runtime/config/config';
import { freePort } from './lib/procs';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => unknown;

/** A socket that accepts every write and never reads: the response goes nowhere. */
class NullSocket extends Duplex {
  override _read(): void {}
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    done();
  }
}

/** Runs one request through `handler`; resolves with the status once the response is ended. */
function inject(
  handler: Handler,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<number> {
  return new Promise((resolve) => {
    const socket = new NullSocket();
    const req = new http.IncomingMessage(socket as never);
    req.method = method;
    req.url = url;
    req.headers = {
      host: '127.0.0.1',
      ...headers,
      ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
    };
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as never);
    const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.end = ((...args: unknown[]) => {
      const ended = end(...args);
      resolve(res.statusCode);
      return ended;
    }) as typeof res.end;
    void handler(req, res);
    if (body !== undefined) req.push(body);
    req.push(null);
  });
}

async function main(): Promise<void> {
  const what = process.argv[2] ?? 'method';
  const n = Number(process.argv[3] ?? 3000);
  const reps = Number(process.env.REPS ?? 10);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'doctype-inject-'));
  const hooked = process.env.INJECT_WEBHOOK === 'toggle';
  const receiver = hooked ? await startReceiver() : undefined;
  const registry = await loadRegistry(process.env.SVC_GENERATED ?? 'bench/tmp/feature-gen');
  const site = await openSite(
    {
      port: 0,
      host: '127.0.0.1',
      // INJECT_DB_URL: a MariaDB database instead (mysql://…/name, created empty beforehand).
      databaseUrl: process.env.INJECT_DB_URL ?? `sqlite:${dir}/site.sqlite`,
      adminPassword: 'inject-admin-pw',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, ...(receiver ? { webhook_allowed_hosts: ['127.0.0.1'] } : {}) },
    },
    registry,
  );
  try {
    const keys = await regenerateKeys(site.db.knex, 'Administrator');
    if (!keys) throw new Error('Administrator missing');
    const auth = { authorization: `token ${keys.api_key}:${keys.api_secret}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const app = createHandler(site);
    const rows = what.startsWith('list') || what === 'count' ? 2000 : 20;
    for (let i = 0; i < rows; i++) {
      await inject(
        app,
        'POST',
        '/api/resource/ToDo',
        json,
        JSON.stringify({ description: `row ${i}`, status: ['Open', 'Closed', 'Cancelled'][i % 3] }),
      );
    }
    const [first] = (await site.db.knex('tabToDo').select('name').limit(1)) as { name: string }[];
    const name = encodeURIComponent(first?.name ?? '');
    const v1Filter = encodeURIComponent('[["status","=","Open"]]');
    const v2Filter = encodeURIComponent('{"status":"Open"}');
    const specs: Record<string, [string, string, Record<string, string>, string?]> = {
      method: ['GET', '/api/method/bench.bench_probe.bench_probe.echo?word=hi', auth],
      get: ['GET', `/api/resource/ToDo/${name}`, auth],
      'get-v2': ['GET', `/api/v2/document/ToDo/${name}`, auth],
      'list-v1': ['GET', `/api/resource/ToDo?filters=${v1Filter}&order_by=modified%20desc`, auth],
      'list-v2': ['GET', `/api/v2/document/ToDo?filters=${v2Filter}&order_by=modified%20desc`, auth],
      count: ['GET', `/api/v2/doctype/ToDo/count?filters=${v2Filter}`, auth],
      create: ['POST', '/api/resource/ToDo', json, process.env.INJECT_BODY ?? '{"description":"inject"}'],
    };
    const scriptName = process.env.INJECT_SCRIPT
      ? (JSON.parse(process.env.INJECT_SCRIPT) as { name?: string }).name
      : undefined;
    if (process.env.INJECT_SCRIPT) {
      const saved = await inject(app, 'POST', '/api/resource/Server Script', json, process.env.INJECT_SCRIPT);
      if (saved !== 201) throw new Error(`the Server Script was refused: ${saved}`);
    }
    if (receiver) {
      const saved = await inject(
        app,
        'POST',
        '/api/resource/Webhook',
        json,
        JSON.stringify({
          name: 'inject-webhook',
          webhook_doctype: 'ToDo',
          webhook_docevent: 'after_insert',
          request_url: `http://127.0.0.1:${receiver.port}/hook`,
          enable_security: 1,
          webhook_secret: 'inject-secret',
        }),
      );
      if (saved !== 201) throw new Error(`the Webhook was refused: ${saved}`);
    }
    /**
     * Waits until every delivery is done (no Queued log row), so that a run's time includes its deliveries. Names are
     * time-ordered: each look reads on from the oldest row still Queued at the last one, not the whole table.
     */
    let oldestQueued = '';
    const drained = async () => {
      if (!receiver) return;
      for (;;) {
        const row = (await site.db
          .knex('tabWebhook Request Log')
          .where('name', '>=', oldestQueued)
          .andWhere({ status: 'Queued' })
          .orderBy('name')
          .first('name')) as { name: string } | undefined;
        if (!row) return;
        oldestQueued = row.name;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const spec = specs[what];
    if (!spec) throw new Error(`unknown scenario ${what}: one of ${Object.keys(specs).join(', ')}`);
    const [method, url, headers, body] = spec;
    const handler = process.env.BARE ? bareHandler(app) : app;
    const status = await inject(handler, method, url, headers, body);
    if (status >= 300) throw new Error(`${what} answered ${status}`);
    const run = async (count: number) => {
      let left = count;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (left-- > 0) await inject(handler, method, url, headers, body);
        }),
      );
      await drained();
    };
    await run(Math.min(n, 5000));
    // INJECT_TOGGLE=1 (with INJECT_SCRIPT): the script is disabled and enabled again between runs, and the runs without
    // it are reported apart (the same process and moment: what the script costs, with the machine's drift on both).
    // INJECT_LOG=toggle does the same with System Settings log_api_requests (off, then on).
    const logToggled = process.env.INJECT_LOG === 'toggle';
    const toggled = (process.env.INJECT_TOGGLE === '1' && scriptName !== undefined) || logToggled || hooked;
    const setLog = async (on: number) => {
      const status = await inject(
        app,
        'PUT',
        '/api/resource/System Settings/System Settings',
        json,
        JSON.stringify({ log_api_requests: on }),
      );
      if (status !== 200) throw new Error(`System Settings were not updated: ${status}`);
    };
    if (process.env.INJECT_LOG === '1') {
      await setLog(1);
      await run(Math.min(n, 5000));
    }
    const subject = logToggled ? 'the request log' : hooked ? 'the webhook' : 'the script';
    const setDisabled = async (disabled: number) => {
      if (logToggled) await setLog(disabled ? 0 : 1);
      else if (hooked) {
        const status = await inject(
          app,
          'PUT',
          '/api/resource/Webhook/inject-webhook',
          json,
          JSON.stringify({ enabled: disabled ? 0 : 1 }),
        );
        if (status !== 200) throw new Error(`the Webhook was not updated: ${status}`);
      } else {
        const status = await inject(
          app,
          'PUT',
          `/api/resource/Server Script/${encodeURIComponent(scriptName as string)}`,
          json,
          JSON.stringify({ disabled }),
        );
        if (status !== 200) throw new Error(`the Server Script was not updated: ${status}`);
      }
      await run(500);
    };
    const perRequest: number[] = [];
    const without: number[] = [];
    // GC pauses per request, by phase (the garbage collector's share of the difference).
    const gcMs = { on: 0, off: 0 };
    let gcPhase: 'on' | 'off' = 'on';
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs[gcPhase] += entry.duration;
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    // INJECT_PROFILE=file: a CPU profile (.cpuprofile) of the measured runs alone, without start-up and warm-up.
    const profiler = process.env.INJECT_PROFILE ? await startProfiler() : undefined;
    const heap = process.env.INJECT_HEAP ? await startProfiler('HeapProfiler') : undefined;
    for (let k = 0; k < reps; k++) {
      for (const off of toggled ? [1, 0] : [0]) {
        if (toggled) await setDisabled(off);
        gcPhase = off ? 'off' : 'on';
        const start = process.cpuUsage();
        await run(n);
        const used = process.cpuUsage(start);
        (off ? without : perRequest).push((used.user + used.system) / n);
      }
    }
    gcObserver.disconnect();
    const runs = reps * n;
    console.log(
      `GC pauses: ${((gcMs.on * 1000) / runs).toFixed(1)} us/req${toggled ? ` with ${subject}, ${((gcMs.off * 1000) / runs).toFixed(1)} without` : ''} (each phase's warm-up included)`,
    );
    if (toggled) {
      // Paired by run (each run with and its run without, back to back), before either list is sorted.
      const diffs = perRequest.map((us, k) => us - (without[k] as number));
      without.sort((a, b) => a - b);
      console.log(
        `without ${subject}: min ${without[0]?.toFixed(1)} us/req, median ${without[without.length >> 1]?.toFixed(1)}`,
      );
      diffs.sort((a, b) => a - b);
      console.log(
        `${logToggled ? 'request log cost per request' : `${hooked ? 'webhook' : 'script'} cost per create`} (paired runs): median ${diffs[diffs.length >> 1]?.toFixed(1)} us, all ${diffs.map((d) => d.toFixed(1)).join(' ')}`,
      );
    }
    if (heap) writeFileSync(process.env.INJECT_HEAP as string, JSON.stringify(await heap()));
    if (profiler) writeFileSync(process.env.INJECT_PROFILE as string, JSON.stringify(await profiler()));
    perRequest.sort((a, b) => a - b);
    const fmt = (us: number | undefined) => (us ?? NaN).toFixed(1);
    console.log(
      `${what}${process.env.BARE ? ' (bare Koa)' : ''}: min ${fmt(perRequest[0])} us/req, median ${fmt(perRequest[perRequest.length >> 1])} us/req over ${reps} runs of ${n}`,
    );
  } finally {
    receiver?.child.kill();
    await closeSite(site);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A webhook receiver answering 204, in a child process (its CPU is not this process's). */
async function startReceiver(): Promise<{ port: number; child: ReturnType<typeof spawn> }> {
  const port = await freePort();
  const code = `require('http').createServer((q, s) => q.resume().on('end', () => s.writeHead(204).end()))
    .listen(${port}, '127.0.0.1', () => console.log('ready'))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.once('data', () => resolve());
  });
  return { port, child };
}

/**
 * Starts the CPU profiler of this thread (or the sampling heap profiler, counting the objects the GC has collected
 * too: what a request allocates); the function returned stops it and gives the profile.
 */
async function startProfiler(kind: 'Profiler' | 'HeapProfiler' = 'Profiler'): Promise<() => Promise<object>> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  if (kind === 'HeapProfiler')
    await post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  else {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 100 });
    await post('Profiler.start');
  }
  return async () => {
    const stop = kind === 'HeapProfiler' ? 'HeapProfiler.stopSampling' : 'Profiler.stop';
    const { profile } = (await post(stop)) as { profile: object };
    session.disconnect();
    return profile;
  };
}

function createHandler(site: Awaited<ReturnType<typeof openSite>>): Handler {
  return createApp(site, { onServerError: (err) => console.error(err) }).callback() as Handler;
}

/** A bare Koa hello-world for GETs (POSTs still reach the app): what the harness itself costs. */
function bareHandler(app: Handler): Handler {
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.body = { hello: 'world' };
  });
  const hello = bare.callback() as Handler;
  return (req, res) => (req.method === 'POST' ? app(req, res) : hello(req, res));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
