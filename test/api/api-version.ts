// What the API tests share: the paths of each API version, row counts, and the error-body contract check.
import type { TestSite } from '../helpers/test-site';

/** The paths and paging parameters of one API version. */
export interface ApiVersion {
  version: 1 | 2;
  /** List and create path of a DocType. */
  collection(doctype: string): string;
  /** Get, update and delete path of a document (`name` goes into the path as given). */
  item(doctype: string, name: string): string;
  /** Query parameters of one page. */
  page(start: number, limit: number): Record<string, number>;
}

/** v1 under a prefix (`/api` or its alias `/api/v1`). */
export const v1 = (prefix: '/api' | '/api/v1' = '/api'): ApiVersion => ({
  version: 1,
  collection: (doctype) => `${prefix}/resource/${encodeURIComponent(doctype)}`,
  item: (doctype, name) => `${prefix}/resource/${encodeURIComponent(doctype)}/${name}`,
  page: (start, limit) => ({ limit_start: start, limit_page_length: limit }),
});

/** v2 (`/api/v2/document`). */
export const v2: ApiVersion = {
  version: 2,
  collection: (doctype) => `/api/v2/document/${encodeURIComponent(doctype)}`,
  item: (doctype, name) => `/api/v2/document/${encodeURIComponent(doctype)}/${name}`,
  page: (start, limit) => ({ start, limit }),
};

/** Number of rows of a DocType's table (optionally matching `where`), read straight from the database. */
export async function countRows(
  t: TestSite,
  doctype: string,
  where: Record<string, unknown> = {},
): Promise<number> {
  const [row] = (await t.site.db.knex(`tab${doctype}`).where(where).count({ count: '*' })) as {
    count: number | string;
  }[];
  return Number(row?.count ?? 0);
}

/** Asserts an error body has exactly the contract's members (`errors` only in v2), the exc_type, and no traceback or SQL. */
export function expectErrorBody(body: Record<string, unknown>, version: 1 | 2, excType: string): void {
  const members = ['_server_messages', 'exc_type', 'exception', ...(version === 2 ? ['errors'] : [])].sort();
  expect(Object.keys(body).sort()).toEqual(members);
  expect(body.exc_type).toBe(excType);
  expect(String(body.exception).startsWith(excType)).toBe(true);
  const messages = (JSON.parse(String(body._server_messages)) as string[]).map(
    (m) => JSON.parse(m) as { message: unknown },
  );
  expect(messages.length).toBeGreaterThan(0);
  for (const m of messages) expect(typeof m.message).toBe('string');
  if (version === 2) {
    expect(body.errors).toEqual([{ type: excType, message: expect.any(String) }]);
  }
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/\\n\s+at |\.ts:\d+\b/);
  expect(text).not.toMatch(/\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\b|SQLITE_|\bER_[A-Z_]+/);
}

/** Tables a hostile request must leave alone. */
const WATCHED = ['ToDo', 'User', 'Has Role', 'Widget', 'Widget Part'];

/** Runs `request`, asserts its status (and exc_type), and that no watched table changed its row count. */
export async function expectRefused<R extends { status: number; body: Record<string, unknown> }>(
  t: TestSite,
  request: () => PromiseLike<R>,
  status: number,
  excType?: string,
): Promise<R> {
  const snapshot = () => Promise.all(WATCHED.map((doctype) => countRows(t, doctype)));
  const before = await snapshot();
  const res = await request();
  expect(res.status).toBe(status);
  if (excType) expect(res.body.exc_type).toBe(excType);
  expect(await snapshot()).toEqual(before);
  return res;
}
