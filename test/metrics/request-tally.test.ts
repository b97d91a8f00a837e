// The request tally prints what prom-client's own Counter and Histogram print for the same requests: same families,
// help, types, samples and values (label order aside).
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestTally } from '../../runtime/metrics/request-tally';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const REQUESTS: [string, string, number, number][] = [
  ['get', 'GET', 200, 0.0004],
  ['get', 'GET', 200, 0.001],
  ['get', 'GET', 404, 0.02],
  ['create', 'POST', 201, 0.5],
  ['create', 'POST', 417, 3],
  ['none', 'GET', 404, 0.0001],
];

/** Each line of an exposition text with its labels sorted, the lines sorted. */
function normalized(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const m = /^([^{ ]+)\{([^}]*)\} (.*)$/.exec(line);
      if (!m) return line;
      const labels = (m[2] as string).split(',').sort().join(',');
      return `${m[1]}{${labels}} ${Number(m[3])}`;
    })
    .sort();
}

test('the tally exposes what prom-client would', async () => {
  const theirs = new Registry();
  const counter = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by route family (route table operation, none: no route), verb and status',
    labelNames: ['route', 'method', 'status'],
    registers: [theirs],
  });
  const histogram = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from the request reaching the application to its answer being decided, by route family and verb',
    labelNames: ['route', 'method'],
    buckets: BOUNDS,
    registers: [theirs],
  });
  const ours = new Registry();
  const tally = new RequestTally(BOUNDS);
  tally.register(ours);
  for (const [route, method, status, seconds] of REQUESTS) {
    counter.inc({ route, method, status });
    histogram.observe({ route, method }, seconds);
    tally.record(route, method, status, seconds);
  }
  expect(normalized(await ours.metrics())).toEqual(normalized(await theirs.metrics()));
  ours.resetMetrics();
  expect(await ours.metrics()).not.toContain('route=');
});
