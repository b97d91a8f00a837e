// The validator threads (generator/emit/validator-threads.ts): code compiled on worker threads is byte for byte the code
// compiled on the main thread, and a schema a thread cannot compile fails the run with the main thread's error.
import { createContext } from '../../generator/context';
import { bodySchema } from '../../generator/emit/validator';
import { validatorCode } from '../../generator/emit/validator-code';
import { compileValidators, validatorThreads } from '../../generator/emit/validator-threads';
import type { JsonSchema } from '../../generator/json-schema';
import { loadDocTypes } from '../../generator/load-doctypes';
import { normalizeDocTypes } from '../../generator/normalize';

const ROOT = `${__dirname}/../..`;

let schemas: JsonSchema[];
beforeAll(() => {
  const { doctypes } = loadDocTypes(['doctypes'], ROOT);
  const ctx = createContext(normalizeDocTypes(doctypes), 'generated');
  schemas = ctx.doctypes.map((ir) => bodySchema(ir, ctx));
});

test.each([1, 2])('%i thread(s) give the code of the main thread alone', async (threads) => {
  const alone = schemas.map(validatorCode);
  expect(alone.length).toBeGreaterThan(10);
  const { codes, onThreads } = await compileValidators(schemas, threads, { joinIn: false }).finish();
  expect(onThreads).toBe(schemas.length);
  expect(codes).toEqual(alone);
});

test('threads and the main thread together give the code of the main thread alone', async () => {
  expect((await compileValidators(schemas, 1).finish()).codes).toEqual(schemas.map(validatorCode));
});

test('a schema no thread can compile fails the run with the error of compiling it here', async () => {
  const bad: JsonSchema = { type: 'object', properties: { code: { type: 'string', pattern: '(' } } };
  expect(() => validatorCode(bad)).toThrow(SyntaxError);
  // Placed first, so that a thread claims it (the schemas go largest first; this one is padded to be the largest).
  const padded = { ...bad, description: 'x'.repeat(100_000) };
  await expect(compileValidators([padded, ...schemas], 1, { joinIn: false }).finish()).rejects.toThrow(
    SyntaxError,
  );
});

test('small sets compile on the main thread alone', () => {
  expect(validatorThreads(10)).toBe(0);
  expect(validatorThreads(766)).toBeGreaterThanOrEqual(0);
});
