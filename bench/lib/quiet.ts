// Before a load line, waits until the bench's other processes are idle: the local MariaDB server (purge and page
// flushing after the seeding and the create lines, or other sessions' work, would run on the same 2 cores as the server
// under load and its load generator) and the bench's other servers, not under load but maybe still busy (GC after their
// own line). Also measures what those processes spent while a line ran, so a row can say how quiet its line was.
import { readdirSync, readFileSync } from 'node:fs';
import { cpuMs } from './procs';
import { BENCH_MYSQL_URL } from './service';

/** How quiet the watched processes were: their CPU in % of one core, and InnoDB's pending work. */
export interface Busy {
  /** CPU of the watched processes together, % of one core. */
  cpuPct: number;
  /** MariaDB's share of `cpuPct`. */
  mariadbPct: number;
  /** InnoDB history list length (undo records purge has still to clean), when MariaDB is watched. */
  history?: number;
  /** Pages InnoDB flushed during the sample. */
  flushed?: number;
}

/** The outcome of one wait. */
export interface QuietWait {
  waitedMs: number;
  quiet: boolean;
  last: Busy;
}

const SAMPLE_MS = 500;
/** Idle: the watched processes together under this % of a core over a sample, purge done, no pages flushed. */
const MAX_IDLE_CPU_PCT = 3;
const MAX_IDLE_HISTORY = 0;

/** The pid of the MariaDB (or MySQL) server on this machine when BENCH_MYSQL_URL points at this machine. */
function localMariadbPid(): number | undefined {
  const host = new URL(BENCH_MYSQL_URL).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'mariadbd' || comm === 'mysqld') return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

type Connection = Awaited<ReturnType<typeof import('mysql2/promise').createConnection>>;

/** Watches the MariaDB server when it runs on this machine, and the pids given to each call (the idle servers). */
export class QuietWatch {
  private readonly mariadbPid: number | undefined;
  private conn: Promise<Connection> | undefined;

  constructor() {
    this.mariadbPid = localMariadbPid();
  }

  /** Whether there is anything to watch besides the given servers. */
  get watchesMariadb(): boolean {
    return this.mariadbPid !== undefined;
  }

  /** CPU ms of MariaDB and of `others` so far (a process that is gone counts 0). */
  cpu(others: number[]): { total: number; mariadb: number } {
    const mariadb = this.mariadbPid === undefined ? 0 : (cpuMs(this.mariadbPid) ?? 0);
    return { total: mariadb + others.reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0), mariadb };
  }

  /** InnoDB's history list length and pages flushed so far (undefined without MariaDB). */
  private async innodb(): Promise<{ history: number; flushed: number } | undefined> {
    if (this.mariadbPid === undefined) return undefined;
    try {
      this.conn ??= import('mysql2/promise').then((mysql) => {
        const url = new URL(BENCH_MYSQL_URL);
        url.pathname = '/';
        return mysql.createConnection(url.toString());
      });
      const [rows] = await (
        await this.conn
      ).query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_history_list_length', 'Innodb_buffer_pool_pages_flushed')",
      );
      const value = (name: string) =>
        Number(
          (rows as { Variable_name: string; Value: string }[]).find((r) => r.Variable_name === name)?.Value ??
            0,
        );
      return {
        history: value('Innodb_history_list_length'),
        flushed: value('Innodb_buffer_pool_pages_flushed'),
      };
    } catch {
      return undefined;
    }
  }

  /** One sample of SAMPLE_MS. */
  async sample(others: number[]): Promise<Busy> {
    const before = this.cpu(others);
    const innoBefore = await this.innodb();
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    const after = this.cpu(others);
    const innoAfter = await this.innodb();
    const ms = performance.now() - t0;
    return {
      cpuPct: (100 * (after.total - before.total)) / ms,
      mariadbPct: (100 * (after.mariadb - before.mariadb)) / ms,
      history: innoAfter?.history,
      flushed: innoBefore && innoAfter ? innoAfter.flushed - innoBefore.flushed : undefined,
    };
  }

  /** Samples until one is idle or `maxMs` has passed. */
  async wait(others: number[], maxMs: number): Promise<QuietWait> {
    const t0 = performance.now();
    for (;;) {
      const last = await this.sample(others);
      const quiet =
        last.cpuPct < MAX_IDLE_CPU_PCT &&
        (last.history ?? 0) <= MAX_IDLE_HISTORY &&
        (last.flushed ?? 0) === 0;
      const waitedMs = performance.now() - t0;
      if (quiet || waitedMs >= maxMs) return { waitedMs, quiet, last };
    }
  }

  /** Closes the status connection. */
  async close(): Promise<void> {
    const conn = this.conn;
    this.conn = undefined;
    if (conn) await (await conn).end().catch(() => undefined);
  }
}

/** "quiet after 1.5 s" or "not quiet after 30 s: 12% CPU, history 40, 8 pages flushed", for a row's note. */
export function describeWait(w: QuietWait): string {
  const s = (w.waitedMs / 1000).toFixed(1);
  if (w.quiet) return `quiet after ${s} s`;
  const parts = [`${w.last.cpuPct.toFixed(0)}% CPU (MariaDB ${w.last.mariadbPct.toFixed(0)}%)`];
  if (w.last.history) parts.push(`history ${w.last.history}`);
  if (w.last.flushed) parts.push(`${w.last.flushed} pages flushed`);
  return `not quiet after ${s} s: ${parts.join(', ')}`;
}
