// docs/errors.md and the error registry list the same classes with the same statuses.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CLASSES } from '../runtime/errors/errors';

const doc = readFileSync(path.resolve(__dirname, '../docs/errors.md'), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| (\w+) +\| (\d{3}) +\|/gm)].map((m) => [m[1] as string, Number(m[2])]),
);

test('every registered error is documented with its status', () => {
  for (const [name, Cls] of Object.entries(ERROR_CLASSES)) {
    expect([name, documented.get(name)]).toEqual([name, new Cls('x').status]);
  }
});

test('every documented error is registered', () => {
  expect([...documented.keys()].sort()).toEqual(Object.keys(ERROR_CLASSES).sort());
});

test('each class reports its own name as exc_type', () => {
  for (const [name, Cls] of Object.entries(ERROR_CLASSES)) expect(new Cls('x').excType).toBe(name);
});
