// The start-up bundle (svc serve) loads controllers, not the DocType JSON beside them: whitelisted methods stay callable.
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import { ensureRegistryBundle } from '../../runtime/cli/registry-bundle';
import { methodTable } from '../../runtime/methods/method-table';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(ROOT, 'test/tmp/bundle-methods-'));
  await runGenerator({ doctypes: ['doctypes', 'bench/doctypes'], out: path.relative(ROOT, dir), cwd: ROOT });
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the bundled registry carries the controller module and its whitelisted functions', async () => {
  const bundle = await ensureRegistryBundle(dir);
  expect(bundle).toBeDefined();
  const registry = (require(bundle as string) as { registry: Registry }).registry;
  expect(typeof registry.get('Bench Probe')?.controller?.default).toBe('function');
  expect([...methodTable(registry).byPath.keys()]).toEqual([
    'bench.bench_probe.bench_probe.echo',
    'bench.bench_probe.bench_probe.echo_limited',
  ]);
}, 60_000);
