// Load generator child of `npm run bench` (pinned to its own core): a warm-up, then the measured autocannon run.
// Argument: a JSON LoadSpec. Prints `measuring` when the measured run starts, then one JSON LoadResult line on stdout.
import autocannon from 'autocannon';

/** What to load. */
export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

/** The measured run's figures. */
export interface LoadResult {
  rps: number;
  total: number;
  durationS: number;
  p50: number;
  p99: number;
  /** The slowest request, ms. */
  max?: number;
  avgMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

function run(spec: LoadSpec, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: spec.url,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    duration: seconds,
    pipelining: 1,
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
  if (spec.warmupSeconds > 0) await run(spec, spec.warmupSeconds);
  process.stdout.write('measuring\n');
  const r = await run(spec, spec.seconds);
  const result: LoadResult = {
    rps: r.requests.average,
    total: r.requests.total,
    durationS: r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
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
