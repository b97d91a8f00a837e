// `svc add-user`, `svc set-password` and `svc generate-keys` on a SQLite site: a user is named by its email in lower
// case (Frappe's User.autoname), so the commands find it by the email as typed, whatever its case.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { addUser, generateKeysFor, setPassword } from '../../runtime/cli/user-commands';

const file = path.resolve(
  __dirname,
  `../tmp/user-commands-${process.pid}-${randomBytes(3).toString('hex')}.sqlite`,
);
const saved = { url: process.env.DATABASE_URL, config: process.env.SITE_CONFIG };
let printed: string[] = [];

beforeAll(() => {
  mkdirSync(path.dirname(file), { recursive: true });
  process.env.DATABASE_URL = `sqlite:${file}`;
  delete process.env.SITE_CONFIG;
  jest.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
});
afterAll(() => {
  jest.restoreAllMocks();
  if (saved.url === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = saved.url;
  if (saved.config !== undefined) process.env.SITE_CONFIG = saved.config;
  for (const ext of ['', '-wal', '-shm', '-migrate-lock']) rmSync(file + ext, { force: true });
});

test('add-user names the user in lower case; set-password and generate-keys find it as typed', async () => {
  printed = [];
  expect(await addUser(['Mixed.Case@Example.com', '--first-name', 'Mixed'])).toBe(0);
  expect(printed).toEqual(['added user mixed.case@example.com']);
  printed = [];
  expect(await setPassword(['Mixed.Case@Example.com', 'a-long-password-1'])).toBe(0);
  expect(printed).toEqual(['password set for mixed.case@example.com']);
  printed = [];
  expect(await generateKeysFor(['MIXED.case@example.com'])).toBe(0);
  expect(printed[0]).toMatch(/^api_key=\w+\napi_secret=\w+$/);
  await expect(setPassword(['nobody@example.com', 'a-long-password-1'])).rejects.toThrow(
    'User nobody@example.com not found',
  );
}, 60_000);
