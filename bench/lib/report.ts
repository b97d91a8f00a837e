// The bench's results: a throughput table (req/s, latency, ratio to the baseline) and a table of other measures.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Measured } from './load';

/** One load scenario. */
export interface ThroughputRow {
  id: string;
  label: string;
  result?: Measured;
  /** req/s divided by the baseline's req/s. */
  ratio?: number;
  /** Baseline server CPU per request / this scenario's: the req/s ratio each would reach with a core to itself. */
  cpuRatio?: number;
  /** Minimum ratio to the baseline (from the issue), if any. */
  minRatio?: number;
  /** Extra lines (targets belong to a later issue). */
  extra?: boolean;
  /** Why there is no result, or a remark. */
  note?: string;
}

/** A measure that is not a load run (time, memory, a ratio between runs). */
export interface MeasureRow {
  id: string;
  label: string;
  value?: number;
  unit: 'ms' | 'MB' | 'x' | 's' | 'count' | 'MiB/s' | 'docs/s';
  target?: string;
  ok?: boolean;
  note?: string;
}

/** Everything the run produced. */
export interface Report {
  startedAt: string;
  finishedAt?: string;
  /** HEAD and whether runtime/, generator/ or generated/ had uncommitted changes when the run started. */
  commit: string;
  node: string;
  cpu: string;
  pinning: string;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  throughput: ThroughputRow[];
  measures: MeasureRow[];
  notes: string[];
}

function fmt(n: number | undefined, digits = 0): string {
  return n === undefined || Number.isNaN(n)
    ? '-'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(head: string[], rows: string[][], right: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? '' : ok ? 'PASS' : 'FAIL';
}

/** A throughput row passes when it has no non-2xx answers or errors and meets its ratio target. */
export function rowOk(row: ThroughputRow): boolean | undefined {
  if (!row.result) return row.minRatio === undefined ? undefined : false;
  if (row.result.non2xx > 0 || row.result.errors > 0) return false;
  if (row.minRatio === undefined || row.ratio === undefined) return undefined;
  return row.ratio >= row.minRatio;
}

/** ' (CPU: PASS)' or ' (CPU: FAIL)' when the CPU-based ratio gives the other verdict than req/s. */
function cpuDisagrees(row: ThroughputRow): string {
  const ok = rowOk(row);
  if (ok === undefined || row.cpuRatio === undefined || row.minRatio === undefined) return '';
  const cpuOk = row.cpuRatio >= row.minRatio;
  return cpuOk === ok ? '' : ` (CPU: ${verdict(cpuOk)})`;
}

/** The report as text tables. */
export function renderReport(r: Report): string {
  const tp = table(
    [
      'scenario',
      'req/s',
      'p50 ms',
      'p99 ms',
      'x baseline',
      'target',
      'result',
      'srv CPU us/req',
      'x baseline (CPU)',
      'srv CPU %',
      'loadavg',
      'note',
    ],
    r.throughput.map((row) => {
      const res = row.result;
      const bad =
        res && (res.non2xx > 0 || res.errors > 0) ? `${res.non2xx} non-2xx, ${res.errors} errors` : '';
      return [
        (row.extra ? '(extra) ' : '') + row.label,
        fmt(res?.rps),
        fmt(res?.p50, 1),
        fmt(res?.p99, 1),
        row.ratio === undefined ? '-' : `${fmt(row.ratio, 3)}x`,
        row.minRatio === undefined ? '' : `>= ${row.minRatio}x`,
        verdict(rowOk(row)) + cpuDisagrees(row),
        fmt(res?.cpuUsPerReq),
        row.cpuRatio === undefined ? '-' : `${fmt(row.cpuRatio, 3)}x`,
        fmt(res?.cpuPct),
        fmt(res?.loadavg, 1),
        [bad, row.note ?? ''].filter(Boolean).join('; '),
      ];
    }),
    [false, true, true, true, true, false, false, true, true, true, true, false],
  );
  const ms = table(
    ['measure', 'value', 'target', 'result', 'note'],
    r.measures.map((m) => [
      m.label,
      m.value === undefined
        ? '-'
        : m.unit === 'x'
          ? `${fmt(m.value, 3)}x`
          : m.unit === 'count'
            ? fmt(m.value)
            : `${fmt(m.value, m.unit === 's' ? 2 : 0)} ${m.unit}`,
      m.target ?? '',
      verdict(m.ok),
      m.note ?? '',
    ]),
    [false, true, false, false, false],
  );
  return [
    `Doctype Service bench — ${r.startedAt}, ${r.commit}`,
    `node ${r.node}, ${r.cpu}; ${r.pinning}`,
    `${r.connections} connections, ${r.seconds} s per scenario after a ${r.warmupSeconds} s warm-up (BENCH_SECONDS, BENCH_WARMUP)`,
    '',
    tp,
    '',
    ms,
    ...(r.notes.length ? ['', ...r.notes.map((n) => `note: ${n}`)] : []),
  ].join('\n');
}

/** Writes the report to bench/results/latest.json; returns the path. */
export function writeReport(r: Report): string {
  const dir = path.join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  const out = {
    ...r,
    throughput: r.throughput.map((row) => ({
      ...row,
      ok: rowOk(row),
      cpuOk:
        row.cpuRatio === undefined || row.minRatio === undefined ? undefined : row.cpuRatio >= row.minRatio,
    })),
  };
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  return file;
}
