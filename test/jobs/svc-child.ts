// Helpers of the job tests that run `node bin/svc.js serve|worker` as a real child process on a test site's database:
// start it with a site config of its own, count a job's recorded outcomes, wait for a condition.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SiteConfig } from '../../runtime/config/config';
import { waitForPort } from '../helpers/private-mariadb';
import type { TestSite } from '../helpers/test-site';

const ROOT = path.resolve(__dirname, '../..');

/** A running `svc` child and how it ended. */
export interface SvcChild {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Removes the child's folder (its site config). */
  cleanup(): void;
}

/** Starts `svc <command>` on the test site's database with `site` as its site config. */
export function startSvc(
  t: TestSite,
  command: string[],
  site: Partial<SiteConfig>,
  env: Record<string, string> = {},
): SvcChild {
  const dir = path.join(
    ROOT,
    'test/tmp',
    `svc-child-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'site_config.json'), JSON.stringify(site));
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), ...command], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: t.site.config.databaseUrl,
      SITE_CONFIG: path.join(dir, 'site_config.json'),
      ADMIN_PASSWORD: 'admin-test-password',
      REDIS_URL: '',
      LOG_LEVEL: 'warn',
      JEST_WORKER_ID: '',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { proc, exited, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** How many items of a job have a recorded outcome. */
export async function itemRows(t: TestSite, job: string): Promise<number> {
  return Number(
    ((await t.site.db.knex('__JobItem').where({ job }).count({ n: '*' }).first()) as { n: unknown }).n,
  );
}

/** Resolves once `check` is true; rejects after `ms`. */
export async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls the job as `auth` until it has finished or failed; returns its status body. */
export async function jobEnd(t: TestSite, id: string, auth: string, ms = 120_000): Promise<any> {
  let status: any;
  await until(async () => {
    status = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', auth)).body.data;
    return status?.status === 'finished' || status?.status === 'failed';
  }, ms);
  return status;
}

/**
 * Checks that a finished bulk_insert job of ToDos described `${prefix}<i>` (i < n) applied every item exactly once:
 * n distinct rows, n distinct names, the same names as the result.
 */
export async function expectEachOnce(t: TestSite, status: any, prefix: string, n: number): Promise<void> {
  expect(status.status).toBe('finished');
  const r = status.result;
  expect([r.total, r.success_count, r.failure_count]).toEqual([n, n, 0]);
  const rows = (await t.site.db
    .knex('tabToDo')
    .where('description', 'like', `${prefix}%`)
    .select('name', 'description')) as { name: string; description: string }[];
  expect(rows).toHaveLength(n);
  expect(new Set(rows.map((row) => row.description)).size).toBe(n);
  expect(new Set(rows.map((row) => row.name))).toEqual(new Set(r.inserted));
  expect(status.progress).toEqual({ done: n, total: n });
}

/** Two `svc serve` children on the test site's database, on `ports`, listening once this resolves. */
export interface ServePair {
  a: string;
  b: string;
  children: SvcChild[];
}

/** Starts `svc serve` (no job worker) on each of the two ports with `env` added, and waits for both to listen. */
export async function startServePair(
  t: TestSite,
  ports: [number, number],
  env: Record<string, string> = {},
): Promise<ServePair> {
  const children = ports.map((port) =>
    startSvc(t, ['serve'], { job_worker: false }, { PORT: String(port), HOST: '127.0.0.1', ...env }),
  );
  await Promise.all(ports.map((port) => waitForPort(port, 60_000)));
  return { a: `http://127.0.0.1:${ports[0]}`, b: `http://127.0.0.1:${ports[1]}`, children };
}

/** SIGTERMs each child still running, waits for it to exit and removes its folder. */
export async function stopChildren(children: readonly SvcChild[]): Promise<void> {
  for (const child of children) {
    if (child.proc.exitCode === null) child.proc.kill('SIGTERM');
    await child.exited;
    child.cleanup();
  }
}

/** A JSON request to a child as `authorization`: its status and parsed body (undefined when empty). */
export async function callJson(
  url: string,
  authorization: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    ...init,
    headers: { Authorization: authorization, 'Content-Type': 'application/json', ...init.headers },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
