// A private MariaDB server for fault tests: its own data folder (mariadb-install-db) and port, started, stopped,
// frozen (SIGSTOP) and thawed by the test. Only the process it started is ever signalled.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** Where the server binaries are looked for. */
const MARIADBD = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'].find((p) => existsSync(p));
const INSTALL_DB = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'].find((p) => existsSync(p));

/** True when this machine can run a private MariaDB. */
export const HAVE_MARIADB = Boolean(MARIADBD && INSTALL_DB);

/**
 * Waits (spinning, at most 2 s) until every thread of `pid` is stopped. SIGSTOP is queued at once, but a thread running
 * on the other core may still answer a statement sent right after it: a test that freezes a server and then sends
 * one expects it unanswered.
 */
export function untilStopped(pid: number): void {
  const stopped = (stat: string) => /^[tT]$/.test(stat.charAt(stat.lastIndexOf(')') + 2));
  for (const end = Date.now() + 2000; Date.now() < end;) {
    try {
      const tasks = readdirSync(`/proc/${pid}/task`);
      if (tasks.every((t) => stopped(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8')))) return;
    } catch {
      return; // gone, or a thread ended meanwhile: nothing left to wait for
    }
  }
}

/** Polls `check` every 50 ms until it is true (or throws after `ms`). */
export async function waitUntil(
  check: () => Promise<boolean>,
  ms = 20_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not reached after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves when something accepts TCP connections on `port` (or rejects after `ms`). */
export async function waitForPort(port: number, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A private mariadbd. */
export class PrivateMariaDB {
  private child?: ChildProcess;
  readonly dir: string;

  /**
   * `serverArgs`: options for mariadbd besides its folders and port (default: no binary log; a replication primary
   * passes `--log-bin`, `--server-id`).
   */
  constructor(
    readonly port: number,
    root = path.resolve(__dirname, '../tmp'),
    private readonly serverArgs: readonly string[] = ['--skip-log-bin'],
  ) {
    this.dir = path.join(root, `mariadb-${port}-${process.pid}`);
  }

  /** `mysql://root@127.0.0.1:<port>/<db>` */
  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  /** Initialises the data folder, once. */
  install(): void {
    if (!existsSync(path.join(this.dir, 'data', 'mysql'))) {
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true });
      const init = spawnSync(
        INSTALL_DB as string,
        [
          '--no-defaults',
          `--datadir=${path.join(this.dir, 'data')}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          `--user=${process.env.USER ?? 'root'}`,
        ],
        // A temp folder of its own: two bootstraps at once in /tmp can collide on a temporary table's name.
        { encoding: 'utf8', env: { ...process.env, TMPDIR: this.dir } },
      );
      if (init.status !== 0) throw new Error(`mariadb-install-db failed: ${init.stderr}`);
    }
  }

  /** Initialises the data folder (once) and starts the server; resolves when it accepts connections. */
  async start(): Promise<void> {
    this.install();
    this.child = spawn(
      MARIADBD as string,
      [
        '--no-defaults',
        `--datadir=${path.join(this.dir, 'data')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${path.join(this.dir, 'mysqld.pid')}`,
        '--user=root',
        ...this.serverArgs,
        '--innodb-buffer-pool-size=16M',
        '--innodb-log-file-size=8M',
        `--tmpdir=${this.dir}`,
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(this.port);
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s); resolves when it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    this.child = undefined;
  }

  /** The server's process id (its CPU time is read from /proc by benchmarks), while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Kills the server at once (SIGKILL), as a crash would; resolves when it has exited. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** Freezes the server: connections stay open, nothing answers (every thread stopped when this returns). */
  freeze(): void {
    const pid = this.child?.pid;
    this.child?.kill('SIGSTOP');
    if (pid !== undefined) untilStopped(pid);
  }

  /** Thaws a frozen server. */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops the server and removes its data folder. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
