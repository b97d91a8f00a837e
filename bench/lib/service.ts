// The service under test: start `runtime/cli/main.ts serve` pinned, log in, make API keys, seed ToDo rows.
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Pinning, pinned, rssKb, runAtExit, startServer, type Started } from './procs';

const ROOT = path.join(__dirname, '..', '..');
export const ADMIN_PASSWORD = 'bench-admin-pw';

/** A running service. */
export interface Service extends Started {
  base: string;
  /** `token key:secret` for the Authorization header. */
  auth: string;
  rssAfterStartKb: number | undefined;
}

/** The environment and node flags of the production start, as package.json's `start` script gives them. */
export interface ProductionStart {
  env: Record<string, string>;
  nodeArgs: string[];
}

/**
 * Reads `npm start` from package.json: `exec [env NAME=value ...] node [flags] dist/runtime/cli/main.js serve`, where a
 * value may be `${NAME:-default}` (the caller's NAME when set, else the default, as sh expands it). The bench starts the
 * compiled build with these, so that its RSS and request figures are the production start's. Throws on another form.
 */
export function productionStart(root = ROOT, callerEnv: NodeJS.ProcessEnv = process.env): ProductionStart {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const script = pkg.scripts.start ?? '';
  const words = script.trim().split(/\s+/);
  const fail = () =>
    new Error(
      `package.json start is not "exec [env NAME=value ...] node [flags] dist/runtime/cli/main.js serve": ${script}`,
    );
  if (words.shift() !== 'exec') throw fail();
  const env: Record<string, string> = {};
  if (words[0] === 'env') {
    words.shift();
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
      const word = words.shift()!;
      const name = word.slice(0, word.indexOf('='));
      const raw = word.slice(name.length + 1);
      const dflt = /^\$\{([A-Za-z_][A-Za-z0-9_]*):-([^}$`'"\\]*)\}$/.exec(raw);
      if (dflt) env[name] = callerEnv[dflt[1]!] || dflt[2]!;
      else if (/^[^$`'"\\]*$/.test(raw)) env[name] = raw;
      else throw fail();
    }
  }
  if (words.shift() !== 'node') throw fail();
  const nodeArgs: string[] = [];
  while (words.length && words[0]!.startsWith('-')) nodeArgs.push(words.shift()!);
  if (words.join(' ') !== 'dist/runtime/cli/main.js serve') throw fail();
  return { env, nodeArgs };
}

/**
 * Starts the service as `node --import tsx runtime/cli/main.ts serve` (what `npx tsx` runs, without the npm and tsx-CLI
 * wrapper processes, so the pinned pid is the server and its RSS is the server's), or the compiled build as `npm start`
 * runs it: `node <its flags> dist/runtime/cli/main.js serve` with its environment (productionStart). Resolves at the
 * "serving" line.
 */
export async function startService(
  pinning: Pinning,
  opts: {
    port: number;
    /** The SQLite file, used when no databaseUrl is given. */
    dbFile: string;
    /** DATABASE_URL instead of `sqlite:<dbFile>`, e.g. a MariaDB database from benchMysqlDatabase(). */
    databaseUrl?: string;
    generated?: string;
    timeoutMs: number;
    label: string;
    extraEnv?: NodeJS.ProcessEnv;
    /** Extra node flags, e.g. --cpu-prof. */
    nodeArgs?: string[];
    /** Run the compiled build (`dist/runtime/cli/main.js`, from `npm run build`) instead of the sources through tsx. */
    compiled?: boolean;
    /** The compiled start's node flags instead of package.json's (bench/ab.ts NODE_ARGS_A/B); its environment stays. */
    startFlags?: string[];
  },
): Promise<Omit<Service, 'auth'>> {
  // BENCH_TSX_START=1: the tsx start gets the production start's environment and memory flags too (not
  // --enable-source-maps: tsx maps stack traces itself), so that compiled and tsx lines differ by the build alone.
  const tsxTuned = !opts.compiled && process.env.BENCH_TSX_START === '1';
  const start = opts.compiled || tsxTuned ? productionStart() : { env: {}, nodeArgs: [] };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...start.env,
    PORT: String(opts.port),
    HOST: '127.0.0.1',
    DATABASE_URL: opts.databaseUrl ?? `sqlite:${opts.dbFile}`,
    ADMIN_PASSWORD,
  };
  // A site config only when the scenario gives one (extraEnv.SITE_CONFIG), never the caller's.
  delete env.SITE_CONFIG;
  Object.assign(env, opts.extraEnv);
  // An undefined value in extraEnv removes the variable (bench/ab.ts ENV_A/B with null).
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  // The compiled build serves dist/generated.
  if (opts.generated && !opts.compiled) env.SVC_GENERATED = opts.generated;
  else delete env.SVC_GENERATED;
  const entry = opts.compiled
    ? [...(opts.startFlags ?? start.nodeArgs), path.join(ROOT, 'dist/runtime/cli/main.js')]
    : [
        ...(tsxTuned ? start.nodeArgs.filter((flag) => flag !== '--enable-source-maps') : []),
        '--import',
        'tsx',
        path.join(ROOT, 'runtime/cli/main.ts'),
      ];
  const [cmd, args] = pinned(pinning, pinning.serverCore, process.execPath, [
    ...(opts.nodeArgs ?? []),
    ...entry,
    'serve',
  ]);
  const started = await startServer(cmd, args, {
    env,
    ready: /^serving \d+ DocTypes on /,
    timeoutMs: opts.timeoutMs,
    label: opts.label,
  });
  return { ...started, base: `http://127.0.0.1:${opts.port}`, rssAfterStartKb: rssKb(started.pid) };
}

/**
 * Which database the bench's services run on: BENCH_DB=mysql (or mariadb) for MariaDB, postgres (or postgresql) for
 * PostgreSQL beside MariaDB, else SQLite.
 */
export function benchDbKind(): 'sqlite' | 'mysql' | 'postgres' {
  const raw = (process.env.BENCH_DB ?? 'sqlite').toLowerCase();
  if (raw === 'sqlite' || raw === '') return 'sqlite';
  if (raw === 'mysql' || raw === 'mariadb') return 'mysql';
  if (raw === 'postgres' || raw === 'postgresql') return 'postgres';
  throw new Error(`BENCH_DB must be sqlite, mysql or postgres, got ${process.env.BENCH_DB}`);
}

/** The PostgreSQL server of the bench: BENCH_POSTGRES_URL, default root (trust) on 127.0.0.1:5432, database postgres. */
export const BENCH_POSTGRES_URL = process.env.BENCH_POSTGRES_URL || 'postgres://root@127.0.0.1:5432/postgres';

/**
 * Tells this module's databases from another copy's in the same process: bench/ab.ts loads each root's copy, whose
 * counters both start at 1 (two roots on MariaDB both asked for bench_<pid>_1).
 */
const DATABASE_TAG = randomBytes(3).toString('hex');

let postgresDatabases = 0;

/** Runs one statement on the server of BENCH_POSTGRES_URL (its own database). */
async function postgresStatement(sql: string, url = BENCH_POSTGRES_URL): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `bench_<pid>_pg<n>` (UTF-8) on BENCH_POSTGRES_URL's server; dropped by drop(), or at exit. */
export async function benchPostgresDatabase(): Promise<BenchMysqlDatabase> {
  const name = `bench_${process.pid}_${DATABASE_TAG}_pg${++postgresDatabases}`;
  await postgresStatement(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`);
  const dropSql = `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`;
  const unregister = runAtExit(() => {
    spawnSync(
      process.execPath,
      [
        '-e',
        `const c = new (require('pg').Client)(process.argv[1]); c.connect().then(() => c.query(process.argv[2])).finally(() => c.end())`,
        BENCH_POSTGRES_URL,
        dropSql,
      ],
      { stdio: 'ignore', timeout: 15000, cwd: ROOT },
    );
  });
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    settle: () => postgresStatement('VACUUM (ANALYZE)', url.toString()),
    drop: async () => {
      unregister();
      await postgresStatement(dropSql);
    },
  };
}

/** The MariaDB server of the bench: BENCH_MYSQL_URL, default root without a password on 127.0.0.1:3306. */
export const BENCH_MYSQL_URL = process.env.BENCH_MYSQL_URL || 'mysql://root@127.0.0.1:3306/';

/** A fresh MariaDB database of the bench's own and the DATABASE_URL naming it. */
export interface BenchMysqlDatabase {
  name: string;
  url: string;
  /**
   * PostgreSQL: VACUUM (ANALYZE) after seeding, so that autovacuum does not visit the freshly seeded tables during a
   * measured round (it did in the first round of whichever A/B side was seeded last).
   */
  settle?(): Promise<void>;
  /** Drops the database (also done at exit, Ctrl-C or the time limit when not called). */
  drop(): Promise<void>;
}

let mysqlDatabases = 0;

/** Runs one statement on the server of `serverUrl`, connected without a database. */
async function mysqlStatement(serverUrl: string, sql: string): Promise<void> {
  const mysql = await import('mysql2/promise');
  const url = new URL(serverUrl);
  url.pathname = '/';
  const conn = await mysql.createConnection(url.toString());
  try {
    await conn.query(sql);
  } finally {
    await conn.end();
  }
}

/**
 * Creates `bench_<pid>_<n>` (utf8mb4) on BENCH_MYSQL_URL's server; dropped by drop(), or at exit when the run ends
 * another way. Names are the bench's own, so a run never touches another database on the server.
 */
export async function benchMysqlDatabase(): Promise<BenchMysqlDatabase> {
  const name = `bench_${process.pid}_${DATABASE_TAG}_${++mysqlDatabases}`;
  await mysqlStatement(
    BENCH_MYSQL_URL,
    `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  const dropSql = `DROP DATABASE IF EXISTS \`${name}\``;
  // At exit the event loop is gone: a child node process drops the database, synchronously.
  const unregister = runAtExit(() => {
    spawnSync(
      process.execPath,
      [
        '-e',
        `require('mysql2/promise').createConnection(process.argv[1]).then(c => c.query(process.argv[2]).finally(() => c.end()))`,
        new URL('/', BENCH_MYSQL_URL).toString(),
        dropSql,
      ],
      { stdio: 'ignore', timeout: 15000, cwd: ROOT },
    );
  });
  const url = new URL(BENCH_MYSQL_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      unregister();
      await mysqlStatement(BENCH_MYSQL_URL, dropSql);
    },
  };
}

async function json(res: Response, what: string): Promise<any> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** Logs in as Administrator and makes API keys; returns the Authorization header value. */
export async function apiToken(base: string): Promise<string> {
  const login = await fetch(`${base}/api/method/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ usr: 'Administrator', pwd: ADMIN_PASSWORD }),
  });
  const body = await json(login, 'login');
  const sid = login.headers
    .getSetCookie()
    .map((c) => /^sid=([^;]*)/.exec(c)?.[1])
    .find(Boolean);
  if (!sid || !body.csrf_token)
    throw new Error(`login gave no sid cookie or csrf_token: ${JSON.stringify(body)}`);
  const keys = await json(
    await fetch(`${base}/api/method/frappe.core.doctype.user.user.generate_keys`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: `sid=${sid}`,
        'X-Frappe-CSRF-Token': body.csrf_token,
      },
      body: JSON.stringify({ user: 'Administrator' }),
    }),
    'generate_keys',
  );
  const { api_key, api_secret } = keys.message ?? {};
  if (!api_key || !api_secret) throw new Error(`generate_keys gave no keys: ${JSON.stringify(keys)}`);
  return `token ${api_key}:${api_secret}`;
}

const STATUSES = ['Open', 'Closed', 'Cancelled'];
const PRIORITIES = ['High', 'Medium', 'Low'];

/** The body of the i-th seeded ToDo: statuses and priorities rotate so filters select about a third. */
export function seedTodo(i: number): Record<string, unknown> {
  return {
    description: `bench seed row ${i}`,
    status: STATUSES[i % 3],
    priority: PRIORITIES[Math.floor(i / 3) % 3],
  };
}

/** Creates ToDo rows numbered from..to-1 through the API, `concurrency` requests in flight; returns their names. */
export async function seedTodos(
  base: string,
  auth: string,
  from: number,
  to: number,
  concurrency = 16,
): Promise<string[]> {
  const names: string[] = new Array(to - from);
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const res = await fetch(`${base}/api/resource/ToDo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth },
        body: JSON.stringify(seedTodo(i)),
      });
      names[i - from] = (await json(res, `seed ToDo ${i}`)).data.name;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return names;
}

/** Number of ToDo rows (v2 count). */
export async function countTodos(base: string, auth: string): Promise<number> {
  return Number(
    (
      await json(
        await fetch(`${base}/api/v2/doctype/ToDo/count`, { headers: { authorization: auth } }),
        'count',
      )
    ).data,
  );
}
