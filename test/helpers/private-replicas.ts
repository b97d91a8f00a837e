// Private replicated databases for read-replica tests and benchmarks: a MariaDB primary with a replica replicating from
// it by GTID, and a PostgreSQL primary with a streaming standby (pg_basebackup -R), each on its own ports and data
// folders, started and stopped by the caller. Only the processes started here are ever signalled.
import { chownSync, cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { HAVE_MARIADB, PrivateMariaDB, waitUntil } from './private-mariadb';
import { PrivatePostgres, serverUser } from './private-postgres';

export { HAVE_MARIADB, waitUntil };
export { HAVE_POSTGRES } from './private-postgres';

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
/** A PostgreSQL primary and a streaming standby made from it with pg_basebackup -R. */
export class PostgresReplication {
  readonly primary: PrivatePostgres;
  readonly standby: PrivatePostgres;
  private readonly dir: string;

  constructor(primaryPort: number, standbyPort: number, root = path.resolve(__dirname, '../tmp')) {
    this.dir = path.join(root, `postgres-${primaryPort}-${process.pid}`);
    const user = serverUser();
    this.primary = new PrivatePostgres(primaryPort, path.join(this.dir, 'primary'), user);
    this.standby = new PrivatePostgres(standbyPort, path.join(this.dir, 'standby'), user);
  }

  /** `postgres://root@127.0.0.1:<port>/<db>` of the primary or the standby. */
  url(server: PrivatePostgres, database: string): string {
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
