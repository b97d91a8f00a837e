// The per-request metrics (svc_http_requests_total, svc_http_request_duration_seconds) tallied in plain maps and read
// out in prom-client's format when scraped. prom-client's labelled inc/observe check and hash their label object on
// every call: about 2 µs a request, 5% of a trivial whitelisted method (bench/diff-profile.ts); here a request costs
// three map lookups and a bucket search.
import type { Registry } from 'prom-client';

/** One route family and verb: its latency histogram and its counts by status. */
interface Entry {
  route: string;
  method: string;
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf only). */
  buckets: number[];
  sum: number;
  count: number;
  statuses: Map<number, number>;
}

/** A sample as prom-client's registry prints it. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric family as prom-client's registry reads it (`get()`, the shape its own metrics return). */
interface Family {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: 'sum' }>;
  reset(): void;
}

/** Requests counted by route family, verb and status, and timed by route family and verb. */
export class RequestTally {
  private entries = new Map<string, Map<string, Entry>>();

  constructor(private readonly bounds: readonly number[]) {}

  /** Records one answered request that took `seconds`. */
  record(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.entries.get(route);
    if (!byMethod) this.entries.set(route, (byMethod = new Map()));
    let entry = byMethod.get(method);
    if (!entry) {
      entry = {
        route,
        method,
        buckets: new Array<number>(this.bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        statuses: new Map(),
      };
      byMethod.set(method, entry);
    }
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    entry.buckets[i] = (entry.buckets[i] as number) + 1;
    entry.sum += seconds;
    entry.count++;
  }

  /** Registers the two families in `registry` (svc_http_requests_total, svc_http_request_duration_seconds). */
  register(registry: Registry): void {
    registry.registerMetric(
      this.family(
        'svc_http_requests_total',
        'HTTP requests answered, by route family (route table operation, none: no route), verb and status',
        'counter',
        () => this.requestSamples(),
      ) as never,
    );
    registry.registerMetric(
      this.family(
        'svc_http_request_duration_seconds',
        'Time from the request reaching the application to its answer being decided, by route family and verb',
        'histogram',
        () => this.durationSamples('svc_http_request_duration_seconds'),
      ) as never,
    );
  }

  private family(name: string, help: string, type: Family['type'], samples: () => Sample[]): Family {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, values: samples(), aggregator: 'sum' }),
      reset: () => {
        this.entries = new Map();
      },
    };
  }

  private *all(): Iterable<Entry> {
    for (const byMethod of this.entries.values()) yield* byMethod.values();
  }

  private requestSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const e of this.all())
      for (const [status, count] of e.statuses)
        samples.push({ labels: { route: e.route, method: e.method, status }, value: count });
    return samples;
  }

  private durationSamples(name: string): Sample[] {
    const samples: Sample[] = [];
    for (const e of this.all()) {
      const labels = { route: e.route, method: e.method };
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += e.buckets[i] as number;
        samples.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
      });
      samples.push(
        { labels: { ...labels, le: '+Inf' }, value: e.count, metricName: `${name}_bucket` },
        { labels, value: e.sum, metricName: `${name}_sum` },
        { labels, value: e.count, metricName: `${name}_count` },
      );
    }
    return samples;
  }
}
