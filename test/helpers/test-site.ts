// A real site for HTTP tests: SQLite in a temp file, or MariaDB (TEST_MYSQL_URL) or PostgreSQL (TEST_POSTGRES_URL) in a
// database of its own per run.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import request from 'supertest';
import type Koa from 'koa';
import { createApp } from '../../runtime/app';
import { closeSite, openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG, type ServiceConfig, type SiteConfig } from '../../runtime/config/config';
import type { Registry } from '../../runtime/registry/registry';
import type { Site } from '../../runtime/site';
import { regenerateKeys } from '../../runtime/auth/api-keys';
import { registry as defaultRegistry } from '../../generated';

/** Which database the suite runs on: PostgreSQL when TEST_POSTGRES_URL is set, MariaDB when TEST_MYSQL_URL is, else SQLite. */
export const DB_KIND: 'mysql' | 'postgres' | 'sqlite' = process.env.TEST_POSTGRES_URL
  ? 'postgres'
  : process.env.TEST_MYSQL_URL
    ? 'mysql'
    : 'sqlite';

/** A running test site. */
export interface TestSite {
  site: Site;
  app: Koa;
  /** supertest bound to the app (in-process, no port). */
  http: ReturnType<typeof request>;
  /** `Authorization` header value of Administrator (token key:secret). */
  adminToken: string;
  close(): Promise<void>;
}

/** A PostgreSQL database of its own, created through the server of `admin` (a URL of an existing database). */
export async function postgresDatabase(
  admin: string,
  name: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const run = async (sql: string) => {
    const k = knexFactory({ client: 'pg', connection: admin });
    try {
      await k.raw(sql);
    } finally {
      await k.destroy();
    }
  };
  await run(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A new, empty database of the backend under test (TEST_POSTGRES_URL, TEST_MYSQL_URL, else a SQLite file). */
export async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const postgres = process.env.TEST_POSTGRES_URL;
  if (postgres) return postgresDatabase(postgres, `svc_test_${suffix}`);
  const mysql = process.env.TEST_MYSQL_URL;
  if (mysql) {
    const name = `svc_test_${suffix}`;
    const admin = knexFactory({ client: 'mysql2', connection: mysql });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.destroy();
    const url = new URL(mysql);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      drop: async () => {
        const k = knexFactory({ client: 'mysql2', connection: mysql });
        await k.raw(`DROP DATABASE IF EXISTS \`${name}\``);
        await k.destroy();
      },
    };
  }
  const dir = path.resolve(__dirname, '../tmp');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `site_${suffix}.sqlite`);
  return {
    url: `sqlite:${file}`,
    drop: async () => {
      for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(file + ext, { force: true });
    },
  };
}

/** Opens a fresh site (own database), with Administrator API keys ready. */
export async function createTestSite(
  options: { site?: Partial<SiteConfig>; registry?: Registry; redisUrl?: string } = {},
): Promise<TestSite> {
  const { url, drop } = await emptyDatabase();
  const filesPath = path.resolve(
    __dirname,
    '../tmp',
    `files_${process.pid}_${randomBytes(4).toString('hex')}`,
  );
  const config: ServiceConfig = {
    port: 0,
    host: '127.0.0.1',
    databaseUrl: url,
    adminPassword: 'admin-test-password',
    adminPasswordDefaulted: false,
    site: { ...DEFAULT_SITE_CONFIG, ...options.site },
    filesPath,
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
  };
  const site = await openSite(config, options.registry ?? defaultRegistry);
  const keys = await regenerateKeys(site.db.knex, 'Administrator');
  if (!keys) throw new Error('Administrator missing');
  const app = createApp(site, { onServerError: () => undefined });
  return {
    site,
    app,
    http: request(app.callback()),
    adminToken: `token ${keys.api_key}:${keys.api_secret}`,
    close: async () => {
      await closeSite(site);
      await drop();
      rmSync(filesPath, { recursive: true, force: true });
    },
  };
}

/** Creates a user with roles and API keys; returns its Authorization header value. */
export async function createUser(
  t: TestSite,
  email: string,
  roles: string[],
  password = 'user-password-1',
): Promise<string> {
  const res = await t.http
    .post('/api/resource/User')
    .set('Authorization', t.adminToken)
    .send({
      email,
      first_name: email.split('@')[0],
      new_password: password,
      roles: roles.map((role) => ({ role })),
    });
  if (res.status !== 201)
    throw new Error(`could not create ${email}: ${res.status} ${JSON.stringify(res.body)}`);
  const keys = await regenerateKeys(t.site.db.knex, email);
  if (!keys) throw new Error(`User ${email} missing`);
  return `token ${keys.api_key}:${keys.api_secret}`;
}
