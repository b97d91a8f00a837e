// The validator cache (generator/validator-cache.ts): a run compiles only the schemas no earlier run compiled, reuses
// the rest byte for byte, and removes entries no run has used for a week.
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createContext } from '../../generator/context';
import { emitAll } from '../../generator/emit';
import { bodySchema } from '../../generator/emit/validator';
import { validatorCode } from '../../generator/emit/validator-code';
import { diskValidatorCache } from '../../generator/validator-cache';
import { contextOf, docTypeIR } from '../helpers/doctype-ir';

const note = docTypeIR({ name: 'Note', fields: [{ fieldname: 'title', fieldtype: 'Data' }] });
const task = docTypeIR({ name: 'Task', fields: [{ fieldname: 'due', fieldtype: 'Date' }] });
const ctx = contextOf(note, task);
const schema = (ir: typeof note) => bodySchema(ir, ctx);

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'validator-cache-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('what one run compiled, the next reads back; another schema is not found', async () => {
  const first = diskValidatorCache(dir);
  expect(first.get(schema(note))).toBeUndefined();
  first.put(schema(note), validatorCode(schema(note)));
  await first.save();
  const next = diskValidatorCache(dir);
  expect(next.get(schema(note))).toBe(validatorCode(schema(note)));
  expect(next.get(schema(task))).toBeUndefined();
});

test('emitAll takes the cached code of a schema and compiles and stores the others', async () => {
  const seeded = diskValidatorCache(dir);
  // A marker no compile would produce: seeing it in the output proves the code came from the cache.
  seeded.put(schema(note), '// from the cache\n');
  await seeded.save();
  const cache = diskValidatorCache(dir);
  const files = await emitAll(ctx, cache);
  expect(files.get('validators/note.ts')).toContain('// from the cache\n');
  expect(files.get('validators/task.ts')).toContain(validatorCode(schema(task)));
  await cache.save();
  expect(diskValidatorCache(dir).get(schema(task))).toBe(validatorCode(schema(task)));
});

test('a run with a warm cache gives the bytes of a run without one', async () => {
  const warm = diskValidatorCache(dir);
  await emitAll(ctx, warm);
  await warm.save();
  expect(readdirSync(dir)).toHaveLength(2);
  const fromCache = await emitAll(createContext(ctx.doctypes, 'generated'), diskValidatorCache(dir));
  expect([...fromCache]).toEqual([...(await emitAll(ctx))]);
});

test('an entry unused for over a week is removed when a run stores new ones; one it used is kept', async () => {
  const old = diskValidatorCache(dir);
  old.put(schema(note), validatorCode(schema(note)));
  await old.save();
  writeFileSync(path.join(dir, 'stale.js'), 'x');
  const weeksAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
  for (const name of readdirSync(dir)) utimesSync(path.join(dir, name), weeksAgo, weeksAgo);
  const run = diskValidatorCache(dir);
  await emitAll(ctx, run);
  await run.save();
  expect(existsSync(path.join(dir, 'stale.js'))).toBe(false);
  expect(diskValidatorCache(dir).get(schema(note))).toBe(validatorCode(schema(note)));
  expect(readdirSync(dir)).toHaveLength(2);
});
