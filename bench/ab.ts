// Simultaneous A/B: two servers pinned to the same core, each loaded by its own autocannon on the other core, in the
// same time window, so that both see the same machine (on a VM whose speed drifts by 20-50% within minutes, two
// separate runs cannot be compared; here an A/A run comes out at 1.00-1.04). Compare two checkouts (ROOT_A, ROOT_B:
// folders of this repo with node_modules; default both this one) or two environments (ENV_A, ENV_B: JSON objects).
//   npx tsx bench/ab.ts                     the trivial method (needs bench/tmp/feature-gen in each root, see inject.ts)
//   AB_PATH='/api/resource/ToDo/{doc}'      GET a seeded ToDo ({doc} is replaced by its name); core registry
//   AB_PATH=/api/resource/ToDo AB_BODY='{"description":"x"}'   POST creates
//   AB_METHOD=PUT AB_PATH='/api/resource/ToDo/{doc}' AB_BODY='{"description":"[<id>]"}'
//                                          updates of a seeded ToDo, each changing it (`[<id>]`: a new id per request)
//   AB_GENERATED_A / AB_GENERATED_B        that side's generated registry (a folder under its root; default generated/),
//                                          e.g. bench/tmp/untracked-gen: the core DocTypes with ToDo's track_changes
//                                          off (bench/untracked-registry.sh), for tracked updates against untracked ones
//   AB_SCRIPT='{"name":"echo","script_type":"API","api_method":"echo_script","script":"frappe.response.message = 1"}'
//                                          saves this Server Script on each side first (JSON fields; Administrator)
//   AB_SCRIPT_A / AB_SCRIPT_B              the same for one side only (an empty value: none), e.g. a create with a
//                                          Before Save script against the same create without it
//   AB_WEBHOOK_B='{"name":"w","webhook_doctype":"ToDo","webhook_docevent":"after_insert","request_url":"http://127.0.0.1:9999/"}'
//                                          saves this Webhook on that side (AB_WEBHOOK: both); the side's SITE_CONFIG
//                                          (ENV_B) must allow the receiver's host; AB_RECEIVER_PORT starts a receiver
//                                          answering 204 here, and the Webhook Request Log counts are printed at the end
// COMPILED_A=1 / COMPILED_B=1 run that side's compiled build (run `npm run build` in its root first) instead of tsx,
// with the environment and node flags of its package.json `npm start`; NODE_ARGS_A / NODE_ARGS_B (JSON arrays) give a
// compiled side other node flags instead (a tsx side gets them besides --import tsx), e.g. NODE_ARGS_A='["--enable-source-maps"]' ENV_A='{"MALLOC_ARENA_MAX":null}' (null removes
// a variable).
// AB_SETTINGS='{"log_api_requests":1}'  saves these System Settings fields on each side first (Administrator);
// AB_SETTINGS_A / AB_SETTINGS_B          one side only, e.g. the request log on against off
// AB_HEADERS='{"x-bench-id":"[<id>]"}'  extra request headers on each side; AB_HEADERS_A / AB_HEADERS_B one side only.
//                                          `[<id>]` in a value is a new id on every request, e.g. a create with a new
//                                          Idempotency-Key each time against the same create without one:
//   AB_PATH=/api/resource/ToDo AB_BODY='{"description":"x"}' AB_HEADERS_A='{"x-bench-id":"[<id>]"}' \
//     AB_HEADERS_B='{"idempotency-key":"[<id>]"}' npx tsx bench/ab.ts
// BENCH_DB=mysql (or mariadb): each side runs on a fresh MariaDB database of its own on BENCH_MYSQL_URL's server
// (bench/lib/service.ts benchMysqlDatabase; dropped afterwards) instead of a SQLite file; BENCH_DB=postgres likewise on
// BENCH_POSTGRES_URL's server (benchPostgresDatabase).
// AB_SEED=N seeds N ToDos on each side first (for a list or count path; a path with {doc} seeds 100).
// AB_DOCS=N: `{doc}` takes the first N seeded ToDos in turn, one per request (default 1: the same ToDo every time, so
// updates from 50 connections wait on its row lock on MariaDB and PostgreSQL; a rotating set measures the update).
// AB_METHOD=DELETE with AB_DOCS=N (no body): each round deletes from a slice of its own, N / AB_ROUNDS documents, the
// warm-up's first; a side that runs past its slice answers 404s, which the round's line reports (shorten AB_SECONDS or
// seed more), e.g. AB_METHOD=DELETE AB_PATH='/api/resource/ToDo/{doc}' AB_DOCS=30000 AB_ROUNDS=3 AB_SECONDS=3.
// Also AB_ROUNDS (default 3) and AB_SECONDS (default 8). Prints each round's req/s and server CPU per request, B/A, and
// each server's RSS after the rounds.
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setSystemSettings } from './lib/bench-users';
import { runLoad } from './lib/load';
import { detectPinning, freePort, rssKb } from './lib/procs';

const ROOT = path.join(__dirname, '..');
const METHOD_PATH = '/api/method/bench.bench_probe.bench_probe.echo?word=hi';

async function start(tag: 'A' | 'B', urlPath: string) {
  const root = path.resolve(process.env[`ROOT_${tag}`] ?? ROOT);
  // A null value removes the variable, e.g. ENV_A='{"MALLOC_ARENA_MAX":null}' against npm start's environment.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(JSON.parse(process.env[`ENV_${tag}`] ?? '{}') as Record<string, string | null>).map(
      ([name, value]) => [name, value ?? undefined],
    ),
  );
  const service = (await import(path.join(root, 'bench/lib/service.ts'))) as typeof import('./lib/service');
  // The root's own procs module tracks the server it spawns: another checkout's stopChild would not find it.
  const procs = (await import(path.join(root, 'bench/lib/procs.ts'))) as typeof import('./lib/procs');
  const generated = process.env[`AB_GENERATED_${tag}`]
    ? path.join(root, process.env[`AB_GENERATED_${tag}`] as string)
    : urlPath === METHOD_PATH
      ? path.join(root, 'bench/tmp/feature-gen')
      : path.join(root, 'generated');
  if (process.env[`COMPILED_${tag}`] === '1' && !existsSync(path.join(root, 'dist/runtime/cli/main.js')))
    throw new Error(`${root}/dist is missing: run npm run build there`);
  if (!existsSync(path.join(generated, 'index.ts'))) {
    throw new Error(
      `${generated} is missing: in ${root} run npx tsx generator/cli.ts --doctypes doctypes --doctypes bench/doctypes --out bench/tmp/feature-gen --quiet`,
    );
  }
  const compiled = process.env[`COMPILED_${tag}`] === '1';
  const nodeArgs = process.env[`NODE_ARGS_${tag}`]
    ? (JSON.parse(process.env[`NODE_ARGS_${tag}`] as string) as string[])
    : undefined;
  // The root's own service module made the database: its exit handler drops it.
  const kind = service.benchDbKind();
  const mysqlDb =
    kind === 'mysql'
      ? await service.benchMysqlDatabase()
      : kind === 'postgres'
        ? await service.benchPostgresDatabase()
        : undefined;
  const svc = await service.startService(detectPinning(), {
    port: await freePort(),
    ...(mysqlDb ? { databaseUrl: mysqlDb.url } : {}),
    dbFile: path.join(root, 'bench/tmp', `ab-${tag}-${process.pid}.sqlite`),
    generated,
    timeoutMs: 120000,
    label: `${tag} (${root})`,
    extraEnv: env,
    compiled,
    startFlags: nodeArgs,
    // A tsx side takes NODE_ARGS_A/B too (before --import tsx), for a comparison with the same flags on both sides.
    nodeArgs: compiled ? undefined : nodeArgs,
  });
  const auth = await service.apiToken(svc.base);
  const script = process.env[`AB_SCRIPT_${tag}`] ?? process.env.AB_SCRIPT;
  if (script) {
    const res = await fetch(`${svc.base}/api/resource/Server Script`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: script,
    });
    if (res.status !== 201)
      throw new Error(`${tag}: Server Script refused: ${res.status} ${await res.text()}`);
  }
  const webhook = process.env[`AB_WEBHOOK_${tag}`] ?? process.env.AB_WEBHOOK;
  if (webhook) {
    const res = await fetch(`${svc.base}/api/resource/Webhook`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: webhook,
    });
    if (res.status !== 201) throw new Error(`${tag}: Webhook refused: ${res.status} ${await res.text()}`);
  }
  const settings = process.env[`AB_SETTINGS_${tag}`] ?? process.env.AB_SETTINGS;
  if (settings) await setSystemSettings(svc.base, auth, JSON.parse(settings) as Record<string, unknown>);
  let resolved = urlPath;
  const seed = Number(process.env.AB_SEED ?? 0);
  let paths: string[] | undefined;
  if (resolved.includes('{doc}')) {
    const docs = Math.max(1, Number(process.env.AB_DOCS ?? 1));
    const names = await service.seedTodos(svc.base, auth, 0, Math.max(100, seed, docs));
    if (docs > 1) paths = names.slice(0, docs).map((n) => resolved.replace('{doc}', encodeURIComponent(n)));
    resolved = resolved.replace('{doc}', encodeURIComponent(names[docs > 1 ? 0 : 50] as string));
  } else if (seed > 0) await service.seedTodos(svc.base, auth, 0, seed);
  await mysqlDb?.settle?.();
  const headers = JSON.parse(process.env[`AB_HEADERS_${tag}`] || process.env.AB_HEADERS || '{}') as Record<
    string,
    string
  >;
  const stop = async () => {
    await procs.stopChild(svc.child);
    await mysqlDb?.drop();
  };
  return { svc, auth, headers, url: svc.base + resolved, ...(paths ? { paths } : {}), stop };
}

/** Prints how many Webhook Request Log rows a side holds in each status (deliveries keeping up, or not). */
async function printDeliveries(tag: string, side: { svc: { base: string }; auth: string }): Promise<void> {
  const counts: string[] = [];
  for (const status of ['Queued', 'Success', 'Failed']) {
    const filters = encodeURIComponent(JSON.stringify([['status', '=', status]]));
    const res = await fetch(
      `${side.svc.base}/api/method/frappe.client.get_count?doctype=Webhook%20Request%20Log&filters=${filters}`,
      {
        headers: { authorization: side.auth },
      },
    );
    counts.push(
      `${status} ${res.ok ? String(((await res.json()) as { message: unknown }).message) : res.status}`,
    );
  }
  console.log(`${tag} Webhook Request Log: ${counts.join(', ')}`);
}

async function main(): Promise<void> {
  const pinning = detectPinning();
  const receiverPort = Number(process.env.AB_RECEIVER_PORT ?? 0);
  const receiver = receiverPort
    ? http
        .createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()))
        .listen(receiverPort, '127.0.0.1')
    : undefined;
  const urlPath = process.env.AB_PATH ?? METHOD_PATH;
  const body = process.env.AB_BODY;
  const verb = (process.env.AB_METHOD ?? 'POST') as 'POST' | 'PUT' | 'DELETE';
  const rounds = Number(process.env.AB_ROUNDS ?? 3);
  const seconds = Number(process.env.AB_SECONDS ?? 8);
  const a = await start('A', urlPath);
  const b = await start('B', urlPath);
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      // A delete takes each document once: the rounds take slices of their own, the first of each for the preflight.
      const target = (side: typeof a) => {
        if (verb !== 'DELETE' || !side.paths)
          return { url: side.url, ...(side.paths ? { paths: side.paths } : {}) };
        const per = Math.floor(side.paths.length / rounds);
        const slice = side.paths.slice((round - 1) * per, round * per);
        return { url: side.svc.base + (slice[0] as string), paths: slice.slice(1) };
      };
      const load = (side: typeof a, label: string) =>
        runLoad(
          pinning,
          {
            ...target(side),
            ...(body ? { method: verb, body } : verb === 'DELETE' ? { method: verb } : {}),
            headers: { authorization: side.auth, 'content-type': 'application/json', ...side.headers },
            idReplacement:
              (body?.includes('[<id>]') ?? false) ||
              Object.values(side.headers).some((value) => value.includes('[<id>]')),
            connections: 50,
            seconds,
            warmupSeconds: 1,
          },
          label,
          side.svc.pid,
        );
      const [ra, rb] = await Promise.all([load(a, 'A'), load(b, 'B')]);
      ratios.push(rb.rps / ra.rps);
      if (ra.cpuUsPerReq && rb.cpuUsPerReq) cpuRatios.push(ra.cpuUsPerReq / rb.cpuUsPerReq);
      const failed = (r: typeof ra) => (r.non2xx ? ` (${r.non2xx} non-2xx)` : '');
      console.log(
        `round ${round}: A ${Math.round(ra.rps)} req/s (${ra.cpuUsPerReq?.toFixed(1)} us/req)${failed(ra)}  B ${Math.round(rb.rps)} req/s (${rb.cpuUsPerReq?.toFixed(1)} us/req)${failed(rb)}  B/A ${(rb.rps / ra.rps).toFixed(3)}`,
      );
    }
    // RSS after the loads (the compiled build's target is at most 120 MB with the core DocTypes).
    const mb = (pid: number) => ((rssKb(pid) ?? NaN) / 1024).toFixed(1);
    console.log(`RSS after the rounds: A ${mb(a.svc.pid)} MB  B ${mb(b.svc.pid)} MB`);
    if (receiver) {
      await new Promise((r) => setTimeout(r, 3000));
      for (const [tag, side] of [
        ['A', a],
        ['B', b],
      ] as const)
        await printDeliveries(tag, side);
    }
  } finally {
    receiver?.close();
    await a.stop();
    await b.stop();
  }
  const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length;
  console.log(`B/A req/s: ${ratios.map((r) => r.toFixed(3)).join(' ')}; mean ${mean.toFixed(3)}`);
  if (cpuRatios.length) {
    const cpuMean = cpuRatios.reduce((sum, r) => sum + r, 0) / cpuRatios.length;
    console.log(
      `A/B server CPU per request (B's speed by CPU): ${cpuRatios.map((r) => r.toFixed(3)).join(' ')}; mean ${cpuMean.toFixed(3)}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
