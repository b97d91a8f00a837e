// A private PostgreSQL server for fault tests and replicas: its own data folder and port, started, stopped, killed,
// frozen and thawed by the caller. Only the processes it started are ever signalled. Run as root, it runs as the
// `postgres` user (PostgreSQL refuses to run as root).
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { untilStopped, waitForPort, waitUntil } from './private-mariadb';

/** The newest PostgreSQL's binaries on this machine (Debian's layout). */
const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
})();

/** True when this machine can run a private PostgreSQL primary and standby. */
export const HAVE_POSTGRES = Boolean(PG_BIN);

/** As root, PostgreSQL runs as the `postgres` user (it refuses to run as root). */
export function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0) throw new Error('running as root needs a postgres user to run PostgreSQL as');
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** One private postgres server on a data folder (`dir/data`), on its own port. */
export class PrivatePostgres {
  private child?: ChildProcess;

  constructor(
    readonly port: number,
    readonly dir: string,
    private readonly user: { uid: number; gid: number } | undefined,
  ) {}

  get data(): string {
    return path.join(this.dir, 'data');
  }

  /** Runs a PostgreSQL tool as the server's user; throws with its output when it fails. */
  tool(name: string, args: string[]): void {
    const result = spawnSync(path.join(PG_BIN as string, name), args, {
      encoding: 'utf8',
      ...(this.user ?? {}),
      cwd: this.dir,
    });
    if (result.status !== 0) throw new Error(`${name} failed: ${result.stderr}${result.stdout}`);
  }

  async start(): Promise<void> {
    const options: SpawnOptions = { stdio: 'ignore', ...(this.user ?? {}) };
    this.child = spawn(
      path.join(PG_BIN as string, 'postgres'),
      [
        '-D',
        this.data,
        '-p',
        String(this.port),
        '-k',
        this.dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'shared_buffers=16MB',
        '-c',
        'fsync=off',
        '-c',
        'max_wal_senders=4',
        '-c',
        'wal_level=replica',
      ],
      options,
    );
    await waitForPort(this.port);
    await waitUntil(
      async () =>
        spawnSync(path.join(PG_BIN as string, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.port)])
          .status === 0,
      20_000,
      `postgres on ${this.port} ready`,
    );
  }

  /** Makes the data folder afresh (initdb: user root, trust auth, UTF8). */
  init(): void {
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    if (this.user) chownSync(this.dir, this.user.uid, this.user.gid);
    this.tool('initdb', ['-D', this.data, '-U', 'root', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  }

  /** `postgres://root@127.0.0.1:<port>/<database>`. */
  url(database: string): string {
    return `postgres://root@127.0.0.1:${this.port}/${database}`;
  }

  /** Freezes the server (SIGSTOP to the postmaster and every backend: each connection is a process of its own). */
  freeze(): void {
    const pids = this.processes();
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    for (const pid of pids) untilStopped(pid);
  }

  /** Thaws a frozen server. */
  thaw(): void {
    for (const pid of this.processes()) process.kill(pid, 'SIGCONT');
  }

  /** The postmaster and its children (backends, WAL processes), read from /proc: only processes this server started. */
  processes(): number[] {
    const root = this.child?.pid;
    if (root === undefined) return [];
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === root;
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
    return [root, ...children];
  }

  /** Stops the server and removes its folder. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** SIGKILL to the postmaster; its backends exit once they see it gone. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** Fast shutdown (SIGINT), then SIGKILL after 10 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await this.signal('SIGINT');
    clearTimeout(timer);
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    this.child = undefined;
  }
}
