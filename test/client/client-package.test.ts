// `svc client --out DIR`: a package with sources, ESM and CommonJS builds, declarations and package.json; the CommonJS
// build talks to a live server, and a consumer type-checks against the declarations under tsc --strict.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCommand } from '../../runtime/cli/commands';
import { createTestSite, type TestSite } from '../helpers/test-site';

const root = path.resolve(__dirname, '../..');
let dir: string;
let t: TestSite;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  mkdirSync(path.join(root, 'test/tmp'), { recursive: true });
  dir = mkdtempSync(path.join(root, 'test/tmp/client-package-'));
  t = await createTestSite();
  server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  server?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('svc client writes a publishable package whose build works against the server', async () => {
  const out = path.join(dir, 'pkg');
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  expect(
    await runCommand(['client', '--out', out, '--name', '@acme/todo-client', '--version', '1.2.3']),
  ).toBe(0);
  const pkg = JSON.parse(readFileSync(path.join(out, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg).toMatchObject({
    name: '@acme/todo-client',
    version: '1.2.3',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist', 'src'],
  });
  expect(pkg.dependencies).toBeUndefined();
  for (const file of ['src/index.ts', 'src/types.ts', 'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts'])
    expect(existsSync(path.join(out, file))).toBe(true);
  // No import of anything outside the package: zero runtime dependencies besides fetch.
  expect(readFileSync(path.join(out, 'dist/index.mjs'), 'utf8')).not.toMatch(/\bfrom\s+['"]|require\(/);

  const client = require(path.join(out, 'dist/index.js')) as typeof import('../../generated/client');
  const [key, secret] = t.adminToken.replace(/^token /, '').split(':') as [string, string];
  const api = client.createClient({ baseUrl, auth: client.tokenAuth(key, secret) });
  const doc = await api.insert('ToDo', { description: 'from the package' });
  expect((await api.get('ToDo', doc.name)).description).toBe('from the package');
  await api.delete('ToDo', doc.name);
  await expect(api.get('ToDo', doc.name)).rejects.toBeInstanceOf(client.errors.DoesNotExistError);
});

test('a consumer type-checks against the declarations (typed fields) and a wrong field is refused', async () => {
  writeFileSync(
    path.join(dir, 'consumer.ts'),
    `import { createClient, tokenAuth } from './pkg';
const api = createClient({ baseUrl: 'http://127.0.0.1:8000', auth: tokenAuth('k', 's') });
export async function names(): Promise<string[]> {
  const page = await api.list('ToDo', { fields: ['name', 'status'], filters: { status: 'Open' } });
  return page.data.map((row) => \`\${row.name} \${row.status ?? ''}\`);
}
export const wrong = () => api.list('ToDo', { fields: ['no_such_field'] });
`,
  );
  const tsc = path.join(root, 'node_modules/.bin/tsc');
  const args = [
    '--strict',
    '--noEmit',
    '--module',
    'node16',
    '--moduleResolution',
    'node16',
    '--types',
    'node',
    'consumer.ts',
  ];
  const out = await promisify(execFile)(tsc, args, { cwd: dir }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  expect(out.trim().split('\n')).toEqual([
    expect.stringMatching(/^consumer\.ts\(7,\d+\): error TS2322: .*no_such_field/),
  ]);
}, 60_000);
