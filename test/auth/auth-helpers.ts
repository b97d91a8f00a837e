// Helpers shared by the authentication tests: System Settings, password login, cookie handling.
import type { Response } from 'supertest';
import type { TestSite } from '../helpers/test-site';

/** Saves System Settings values as Administrator (the auth caches drop them at once). */
export async function setSettings(t: TestSite, values: Record<string, unknown>): Promise<void> {
  const res = await t.http
    .put('/api/resource/System Settings/System Settings')
    .set('Authorization', t.adminToken)
    .send(values);
  if (res.status !== 200) throw new Error(`System Settings: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The Set-Cookie headers of a response. */
export function setCookies(res: Response): string[] {
  const header = res.headers['set-cookie'] as string[] | string | undefined;
  return header === undefined ? [] : Array.isArray(header) ? header : [header];
}

/** The value a response sets for cookie `name` (undefined when it does not set it). */
export function cookieValue(res: Response, name: string): string | undefined {
  const line = setCookies(res).find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : (line.split(';')[0] as string).slice(name.length + 1);
}

/** A logged-in session: the Cookie header to send and the session's CSRF token. */
export interface LoggedIn {
  cookie: string;
  csrf: string;
  sid: string;
}

/** Logs in with a password through POST /api/method/login; throws unless it succeeds. */
export async function login(
  t: TestSite,
  usr: string,
  pwd: string,
  headers: Record<string, string> = {},
): Promise<LoggedIn> {
  const res = await t.http.post('/api/method/login').set(headers).send({ usr, pwd });
  if (res.status !== 200) throw new Error(`login ${usr}: ${res.status} ${JSON.stringify(res.body)}`);
  const sid = cookieValue(res, 'sid');
  if (!sid) throw new Error('login set no sid cookie');
  return { cookie: `sid=${sid}`, csrf: String(res.body.csrf_token), sid };
}

/** Number of rows of a table (checks that refused requests changed nothing). */
export async function countRows(t: TestSite, table: string): Promise<number> {
  const row = (await t.site.db.knex(table).count({ n: '*' }).first()) as { n: number | string };
  return Number(row.n);
}
