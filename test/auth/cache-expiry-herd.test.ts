// When a cached API key, user or System Settings entry expires under load, the requests in flight share one read
// instead of each running its own (with 50 concurrent clients that was ~50 key lookups and ~50 user loads on the event
// loop at once, every 5 seconds: the latency spike of every client). A write's forget still wins: a read that began
// before it is not cached, and requests after it start a new read.
import type { Knex } from 'knex';
import { forgetApiKeys, userForApiKey } from '../../runtime/auth/api-keys';
import { loadSettings, forgetSettings } from '../../runtime/auth/settings';
import { forgetUsers, loadUser } from '../../runtime/auth/users';
import { createTestSite, createUser, type TestSite } from '../helpers/test-site';

let t: TestSite;
let key: string;
let secret: string;
const USER = 'herd-user@example.com';
beforeAll(async () => {
  t = await createTestSite();
  const token = await createUser(t, USER, ['System Manager']);
  [key, secret] = token.slice('token '.length).split(':') as [string, string];
});
afterAll(() => t.close());

/** Runs `fn` and returns how many SQL statements mentioning `table` it sent through knex. */
async function countingReads(table: string, fn: () => Promise<unknown>): Promise<number> {
  const knex = t.site.db.knex as Knex;
  let n = 0;
  const onQuery = (q: { sql: string }) => {
    if (q.sql.includes(table)) n++;
  };
  knex.on('query', onQuery);
  try {
    await fn();
  } finally {
    knex.off('query', onQuery);
  }
  return n;
}

test('20 concurrent key checks after expiry read the key once, and all of them authenticate', async () => {
  forgetApiKeys();
  let users: (string | undefined)[] = [];
  const reads = await countingReads('tabUser', async () => {
    users = await Promise.all(Array.from({ length: 20 }, () => userForApiKey(t.site.db.knex, key, secret)));
  });
  expect(reads).toBe(1);
  expect(users).toEqual(Array(20).fill(USER));
  // The wrong secret is still refused by a request that shared the read.
  forgetApiKeys();
  const mixed = await Promise.all([
    userForApiKey(t.site.db.knex, key, secret),
    userForApiKey(t.site.db.knex, key, `${secret}x`),
  ]);
  expect(mixed).toEqual([USER, undefined]);
});

test('a key forgotten while its read is in flight is read again, and the older read is not cached', async () => {
  forgetApiKeys();
  const reads = await countingReads('tabUser', async () => {
    const first = userForApiKey(t.site.db.knex, key, secret);
    forgetApiKeys();
    const second = userForApiKey(t.site.db.knex, key, secret);
    expect(await Promise.all([first, second])).toEqual([USER, USER]);
  });
  expect(reads).toBe(2);
});

test('20 concurrent loads of an expired user read it once', async () => {
  forgetUsers();
  let records: unknown[] = [];
  const reads = await countingReads('tabHas Role', async () => {
    records = await Promise.all(Array.from({ length: 20 }, () => loadUser(t.site.db.knex, USER)));
  });
  expect(reads).toBe(1);
  expect(new Set(records).size).toBe(1);
  expect((records[0] as { roles: Set<string> }).roles.has('System Manager')).toBe(true);
});

test('20 concurrent reads of expired System Settings read them once', async () => {
  forgetSettings(t.site);
  const reads = await countingReads('tabSingles', async () => {
    const all = await Promise.all(Array.from({ length: 20 }, () => loadSettings(t.site)));
    expect(new Set(all).size).toBe(1);
  });
  expect(reads).toBe(1);
});
