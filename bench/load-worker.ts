// Load generator child of `npm run bench` (pinned to its own core): a warm-up, then the measured autocannon run.
// Argument: a JSON LoadSpec. Prints `measuring` when the measured run starts, then one JSON LoadResult line on stdout.
import { readFileSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** What to load. */
export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /**
   * Replace `[<id>]` in the request (the body, or a header's value such as `Idempotency-Key: [<id>]`) by an id new on
   * every request.
   */
  idReplacement?: boolean;
  /**
   * Paths on `url`'s host that the requests take in turn (across all connections) instead of `url`'s own, e.g. updates
   * of a rotating set of documents rather than of one (which measures its row lock).
   */
  paths?: string[];
  /** Linux, root: this worker's autogroup nice (bench/lib/procs.ts shieldSelf; BENCH_SHIELD of the large scenario). */
  shield?: number;
}

/** The measured run's figures. */
export interface LoadResult {
  rps: number;
  total: number;
  durationS: number;
  p50: number;
  p99: number;
  /** The slowest request, ms (autocannon's figure: it includes each connection's first request, see steadyMax). */
  max?: number;
  /**
   * The slowest request other than each connection's first, ms. autocannon starts a connection's first request's clock
   * before the TCP connect (and before it has built the other connections' clients), so with 50 connections opened at
   * once that first response carries the connection setup, not the server's answer time: it is the run's warm-up.
   */
  steadyMax?: number;
  /** The slowest first response of a connection (connect included), ms. */
  firstMax?: number;
  avgMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface Run {
  result: autocannon.Result;
  steadyMax: number;
  firstMax: number;
}

/** The next of `spec.paths` to take: the measured run goes on from where the warm-up stopped (a delete takes each once). */
let next = 0;

function run(spec: LoadSpec, seconds: number): Promise<Run> {
  const seen = new WeakSet<object>();
  let steadyMax = 0;
  let firstMax = 0;
  const paths = spec.paths;
  const instance = autocannon({
    url: spec.url,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    idReplacement: spec.idReplacement ?? false,
    connections: spec.connections,
    duration: seconds,
    pipelining: 1,
    ...(paths?.length
      ? { requests: [{ setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] as string }) }] }
      : {}),
  });
  // Without a callback autocannon returns its tracker (an EventEmitter) made thenable; the types only know the promise.
  (instance as unknown as NodeJS.EventEmitter).on(
    'response',
    (client: object, _status: number, _bytes: number, ms: number) => {
      if (seen.has(client)) steadyMax = Math.max(steadyMax, ms);
      else {
        seen.add(client);
        firstMax = Math.max(firstMax, ms);
      }
    },
  );
  return Promise.resolve(instance).then((result) => ({ result, steadyMax, firstMax }));
}

async function main(): Promise<void> {
  // The spec's JSON, or `@<file>` holding it (a spec too long for one argument: bench/lib/load.ts).
  const arg = process.argv[2] ?? '';
  const spec = JSON.parse(arg.startsWith('@') ? readFileSync(arg.slice(1), 'utf8') : arg) as LoadSpec;
  // Spawned in a session of its own, hence an autogroup of its own: its nice is set here.
  if (spec.shield !== undefined) writeFileSync('/proc/self/autogroup', String(spec.shield));
  if (spec.warmupSeconds > 0) await run(spec, spec.warmupSeconds);
  process.stdout.write('measuring\n');
  const { result: r, steadyMax, firstMax } = await run(spec, spec.seconds);
  const result: LoadResult = {
    rps: r.requests.average,
    total: r.requests.total,
    durationS: r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    steadyMax: Math.round(steadyMax * 10) / 10,
    firstMax: Math.round(firstMax * 10) / 10,
    avgMs: r.latency.average,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
