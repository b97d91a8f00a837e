// A private redis-server for fault tests: its own port, no persistence (or an append-only file in `dir`, synced on
// every write, so it survives a kill -9), started and stopped by the test. Only the process it started is signalled.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { untilStopped, waitForPort } from './private-mariadb';

const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

/** True when this machine can run a private Redis. */
export const HAVE_REDIS = Boolean(REDIS_SERVER);

/** A private redis-server on `port`. */
export class PrivateRedis {
  private child?: ChildProcess;

  constructor(
    readonly port: number,
    private readonly dir?: string,
  ) {}

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server; resolves when it accepts connections. */
  async start(): Promise<void> {
    this.child = spawn(
      REDIS_SERVER as string,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        ...(this.dir
          ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir]
          : ['--appendonly', 'no']),
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(this.port);
  }

  /** Stops the server; resolves when it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
    this.child = undefined;
  }

  /** Kills the server with SIGKILL (no chance to write anything); resolves when it has exited. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** Freezes the server (SIGSTOP): its sockets stay open, nothing answers. */
  freeze(): void {
    const pid = this.child?.pid;
    this.child?.kill('SIGSTOP');
    if (pid !== undefined) untilStopped(pid);
  }

  /** Thaws a frozen server. */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }
}
