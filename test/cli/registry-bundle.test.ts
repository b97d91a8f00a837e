// The start-up bundle: built from a generated folder, loads the same registry, and is rebuilt when an input changes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runGenerator } from '../../generator/run-generator';
import { buildBundle } from '../../runtime/cli/cached-bundle';
import { MAY_LEAVE, ensureRegistryBundle, ownedBy } from '../../runtime/cli/registry-bundle';
import type { Registry } from '../../runtime/registry/registry';

const ROOT = path.resolve(__dirname, '../..');
let dir: string;

beforeAll(async () => {
  mkdirSync(path.join(ROOT, 'test/tmp'), { recursive: true });
  dir = mkdtempSync(path.join(ROOT, 'test/tmp/bundle-'));
  await runGenerator({ doctypes: ['doctypes'], out: dir, cwd: ROOT });
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the bundle holds the registry of the generated folder', async () => {
  const bundle = await ensureRegistryBundle(dir);
  expect(bundle).toBeDefined();
  const fromBundle = (require(bundle as string) as { registry: Registry }).registry;
  const fromSource = (require(path.join(dir, 'index.ts')) as { registry: Registry }).registry;
  const names = (r: Registry) =>
    r
      .all()
      .map((b) => b.meta.name)
      .sort();
  expect(names(fromBundle)).toEqual(names(fromSource));
  expect(fromBundle.get('ToDo')?.meta).toEqual(fromSource.get('ToDo')?.meta);
  // The validators stay outside the bundle, required by path at their first call; they work from it: a ToDo body with
  // a bad Select value is refused, with ajv's errors.
  const text = readFileSync(bundle as string, 'utf8');
  expect(readFileSync(path.join(dir, 'validators', 'todo.ts'), 'utf8')).toContain("'$id':'body'");
  expect(/\$id['"]?:\s*['"]body['"]/.test(text)).toBe(false);
  expect(text.includes(path.join(dir, 'validators', 'todo.ts'))).toBe(true);
  const validate = fromBundle.get('ToDo')?.validateBody;
  expect(validate?.({ description: 'x', status: 'Nonsense' })).toBe(false);
  expect(validate?.errors?.[0]).toMatchObject({ instancePath: '/status', keyword: 'enum' });
  expect(validate?.({ description: 'x', status: 'Open' })).toBe(true);
  expect(validate?.errors).toBeNull();
}, 60_000);

test('a fresh bundle is reused; a changed input rebuilds it', async () => {
  const first = (await ensureRegistryBundle(dir)) as string;
  const builtAt = statSync(first).mtimeMs;
  expect(await ensureRegistryBundle(dir)).toBe(first);
  expect(statSync(first).mtimeMs).toBe(builtAt);

  const todoModel = path.join(dir, 'models', 'todo.ts');
  writeFileSync(
    todoModel,
    readFileSync(todoModel, 'utf8').replace("label: 'Status'", "label: 'Bundle Probe'"),
  );
  const rebuilt = (await ensureRegistryBundle(dir)) as string;
  // Not toContain: a failure would print the whole bundle.
  expect(readFileSync(rebuilt, 'utf8').includes('Bundle Probe')).toBe(true);
}, 60_000);

test('only the imports that may leave the generated files are looked at, and the bundle is the same', async () => {
  // MAY_LEAVE lets esbuild resolve the generated files' own imports by itself (a third of the build's time for the
  // fixture DocTypes); a generated import it missed would be bundled where it must stay outside, so the two differ.
  const spec = { entry: { entryPoints: [path.join(dir, 'index.ts')] }, owns: ownedBy(dir), codeCache: false };
  const out = mkdtempSync(path.join(ROOT, 'test/tmp/bundle-filter-'));
  try {
    const every = await buildBundle({ dir: out, bundle: path.join(out, 'every.js') }, spec);
    const narrow = await buildBundle(
      { dir: out, bundle: path.join(out, 'narrow.js') },
      { ...spec, mayLeave: MAY_LEAVE },
    );
    const text = (file: string | undefined) => readFileSync(file as string, 'utf8');
    expect(text(narrow).length).toBeGreaterThan(1000);
    expect(text(narrow) === text(every)).toBe(true);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 60_000);
