// Private replicated databases for read-replica tests and benchmarks: a MariaDB primary with a replica replicating from
// it by GTID, and a PostgreSQL primary with a streaming standby (pg_basebackup -R), each on its own ports and data
// folders, started and stopped by the caller. Only the processes started here are ever signalled.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { HAVE_MARIADB, PrivateMariaDB, waitForPort } from './private-mariadb';

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

export { HAVE_MARIADB };

/** No flush per commit: these servers hold test data only, and the machine is shared. */
const FAST = ['--innodb-flush-log-at-trx-commit=0', '--sync-binlog=0', '--skip-innodb-doublewrite'];

/** A MariaDB primary (binary log, server_id 1) and a replica (server_id 2) replicating from it with GTID. */
export class MariaDBReplication {
  readonly primary: PrivateMariaDB;
  readonly replica: PrivateMariaDB;

  constructor(primaryPort: number, replicaPort: number, root = path.resolve(__dirname, '../tmp')) {
    this.primary = new PrivateMariaDB(primaryPort, root, [
      '--server-id=1',
      '--log-bin=primary-bin',
      '--binlog-format=ROW',
      ...FAST,
    ]);
    this.replica = new PrivateMariaDB(replicaPort, root, [
      '--server-id=2',
      '--skip-log-bin',
      '--read-only',
      ...FAST,
    ]);
  }

  /** Starts both servers and the replication; `database` is created on the primary and reaches the replica. */
  async start(database: string): Promise<void> {
    // One mariadb-install-db for both (the slowest step): the replica starts from a copy of the new data folder.
    this.primary.install();
    rmSync(this.replica.dir, { recursive: true, force: true });
    mkdirSync(this.replica.dir, { recursive: true });
    cpSync(path.join(this.primary.dir, 'data'), path.join(this.replica.dir, 'data'), { recursive: true });
    await Promise.all([this.primary.start(), this.replica.start()]);
    await this.onReplica((k) =>
      k.raw(
        `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${this.primary.port}, MASTER_USER='root', ` +
          `MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos`,
      ),
    );
    await this.onReplica((k) => k.raw('START SLAVE'));
    await this.onPrimary((k) =>
      k.raw(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`),
    );
    await this.caughtUp();
  }

  /** Runs `work` with a knex on the primary's `mysql` database. */
  onPrimary<T>(work: (k: Knex) => Promise<T>): Promise<T> {
    return withKnex('mysql2', this.primary.url('mysql'), work);
  }

  /** Runs `work` with a knex on the replica's `mysql` database. */
  onReplica<T>(work: (k: Knex) => Promise<T>): Promise<T> {
    return withKnex('mysql2', this.replica.url('mysql'), work);
  }

  /** Resolves once the replica has applied everything the primary has written so far. */
  async caughtUp(ms = 20_000): Promise<void> {
    const [rows] = (await this.onPrimary((k) => k.raw('select @@gtid_binlog_pos as pos'))) as [
      { pos: string }[],
    ];
    const pos = rows[0]?.pos ?? '';
    const [waited] = (await this.onReplica((k) =>
      k.raw('select master_gtid_wait(?, ?) as r', [pos, ms / 1000]),
    )) as [{ r: number }[]];
    if (Number(waited[0]?.r) !== 0) throw new Error(`replica did not reach ${pos} within ${ms} ms`);
  }

  /** Stops both servers and removes their data folders. */
  async destroy(): Promise<void> {
    await this.replica.destroy();
    await this.primary.destroy();
  }
}

/** The PostgreSQL binaries' folder (the newest installed), when there is one. */
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
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0) throw new Error('running as root needs a postgres user to run PostgreSQL as');
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** One private postgres server on a data folder. */
class PostgresServer {
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

/** A PostgreSQL primary and a streaming standby made from it with pg_basebackup -R. */
export class PostgresReplication {
  readonly primary: PostgresServer;
  readonly standby: PostgresServer;
  private readonly dir: string;

  constructor(primaryPort: number, standbyPort: number, root = path.resolve(__dirname, '../tmp')) {
    this.dir = path.join(root, `postgres-${primaryPort}-${process.pid}`);
    const user = serverUser();
    this.primary = new PostgresServer(primaryPort, path.join(this.dir, 'primary'), user);
    this.standby = new PostgresServer(standbyPort, path.join(this.dir, 'standby'), user);
  }

  /** `postgres://root@127.0.0.1:<port>/<db>` of the primary or the standby. */
  url(server: PostgresServer, database: string): string {
    return `postgres://root@127.0.0.1:${server.port}/${database}`;
  }

  /** Makes both data folders, starts both servers, and creates `database` on the primary. */
  async start(database: string): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true });
    const user = serverUser();
    for (const dir of [this.dir, this.primary.dir, this.standby.dir]) {
      mkdirSync(dir, { recursive: true });
      if (user) chownSync(dir, user.uid, user.gid);
    }
    this.primary.tool('initdb', [
      '-D',
      this.primary.data,
      '-U',
      'root',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    await this.primary.start();
    this.primary.tool('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.primary.port),
      '-U',
      'root',
      '-D',
      this.standby.data,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    await this.standby.start();
    await this.onPrimary((k) => k.raw(`CREATE DATABASE "${database}" ENCODING 'UTF8' TEMPLATE template0`));
    await this.caughtUp();
  }

  onPrimary<T>(work: (k: Knex) => Promise<T>): Promise<T> {
    return withKnex('pg', this.url(this.primary, 'postgres'), work);
  }

  onStandby<T>(work: (k: Knex) => Promise<T>): Promise<T> {
    return withKnex('pg', this.url(this.standby, 'postgres'), work);
  }

  /** Resolves once the standby has replayed the primary's WAL as it is now. */
  async caughtUp(ms = 20_000): Promise<void> {
    const { rows } = (await this.onPrimary((k) =>
      k.raw('select pg_current_wal_insert_lsn()::text as lsn'),
    )) as {
      rows: { lsn: string }[];
    };
    const lsn = rows[0]?.lsn ?? '0/0';
    await waitUntil(
      () =>
        this.onStandby(async (k) => {
          const r = (await k.raw('select pg_last_wal_replay_lsn() >= ?::pg_lsn as ok', [lsn])) as {
            rows: { ok: boolean }[];
          };
          return r.rows[0]?.ok === true;
        }),
      ms,
      `standby at ${lsn}`,
    );
  }

  async destroy(): Promise<void> {
    await this.standby.stop();
    await this.primary.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs `work` with a knex of its own on `url`, destroyed after. */
async function withKnex<T>(client: string, url: string, work: (k: Knex) => Promise<T>): Promise<T> {
  const k = knexFactory({ client, connection: url, pool: { min: 0, max: 1 } });
  try {
    return await work(k);
  } finally {
    await k.destroy();
  }
}
