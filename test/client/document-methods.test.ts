// The typed client's document methods (`runMethod`), on the fixture DocTypes (Widget's whitelisted methods): typed
// arguments and results from the controller's signatures, the document as the method left it, verbs as declared.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { fixtureRegistry, generatedFolder } from '../helpers/fixture-registry';
import { createTestSite, type TestSite } from '../helpers/test-site';

type ClientModule = typeof import('../../generated/client');

let t: TestSite;
let server: http.Server;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  t = await createTestSite({ registry: await fixtureRegistry() });
  dir = await generatedFolder();
  server = http.createServer(t.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  server?.close();
  await t?.close();
});

test('runMethod calls a whitelisted document method and answers its result and the document', async () => {
  const client = require(path.join(dir, 'client/index.ts')) as ClientModule;
  const [key, secret] = t.adminToken.replace(/^token /, '').split(':') as [string, string];
  // The fixture client knows Widget; this module's types are the repo's, so the calls go through a loose view.
  const api = client.createClient({ baseUrl, auth: client.tokenAuth(key, secret) }) as unknown as {
    insert(dt: string, body: object): Promise<{ name: string }>;
    runMethod(
      dt: string,
      name: string,
      m: string,
      args: object,
    ): Promise<{ result: unknown; doc: { qty?: number } }>;
  };
  const widget = await api.insert('Widget', { title: 'typed', status: 'Active', qty: 1 });
  const bumped = await api.runMethod('Widget', widget.name, 'bump', { by: 2 });
  expect(bumped.result).toBe(3);
  expect(bumped.doc.qty).toBe(3);
  const described = await api.runMethod('Widget', widget.name, 'describe', { prefix: '> ' });
  expect(described.result).toBe('> typed');
  // retitle_by_get answers GET only: the client takes the verb from the generated table.
  const retitled = await api.runMethod('Widget', widget.name, 'retitle_by_get', { title: 'renamed' });
  expect(retitled.result).toBe('renamed');
});

test('the fixture client types runMethod by the controller: arguments checked, the result typed', async () => {
  writeFileSync(
    path.join(dir, 'widget-consumer.ts'),
    `import { createClient, tokenAuth } from './client';
const api = createClient({ baseUrl: 'http://127.0.0.1:8000', auth: tokenAuth('k', 's') });
export async function run(name: string): Promise<string> {
  const described = await api.runMethod('Widget', name, 'describe', { prefix: '>' });
  const text: string = described.result;
  return text + String(described.doc.title);
}
export const wrongArgument = () => api.runMethod('Widget', 'w', 'bump', { by: 'two' });
export const noSuchMethod = () => api.runMethod('Widget', 'w', 'nope', {});
`,
  );
  const tsc = path.resolve(__dirname, '../../node_modules/.bin/tsc');
  const args = [
    '--strict',
    '--noEmit',
    '--skipLibCheck',
    '--module',
    'node16',
    '--moduleResolution',
    'node16',
  ];
  const out = await promisify(execFile)(tsc, [...args, '--types', 'node', 'widget-consumer.ts'], {
    cwd: dir,
  }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  const lines = out
    .trim()
    .split('\n')
    .filter((l) => /^widget-consumer/.test(l));
  expect(lines).toEqual([
    expect.stringMatching(/^widget-consumer\.ts\(8,\d+\): error TS2322/),
    expect.stringMatching(/^widget-consumer\.ts\(9,\d+\): error TS2345/),
  ]);
}, 120_000);
