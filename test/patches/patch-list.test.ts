// patches.txt: sections, order, comments, the line as the Patch Log key, and malformed lines refused with their line.
import path from 'node:path';
import { PatchError } from '../../runtime/errors/errors';
import { parsePatchList } from '../../runtime/patches/patch-list';

const ROOT = '/project';

test('patches keep their order under their section; lines before any section are pre_model_sync', () => {
  const list = parsePatchList(
    [
      '# first comment',
      'patches.v0.legacy',
      '[post_model_sync]',
      'patches.v1.fill_totals',
      '',
      '[pre_model_sync]',
      '  patches.v1.rename_title  ',
      '[post_model_sync]   # after the sync',
      'patches.v1.last #2026-11-28',
    ].join('\n'),
    ROOT,
  );
  expect(list.pre_model_sync.map((p) => [p.module, p.line])).toEqual([
    ['patches.v0.legacy', 2],
    ['patches.v1.rename_title', 7],
  ]);
  expect(list.post_model_sync.map((p) => p.key)).toEqual([
    'patches.v1.fill_totals',
    'patches.v1.last #2026-11-28',
  ]);
  expect(list.post_model_sync[1]?.module).toBe('patches.v1.last');
  expect(list.pre_model_sync[1]?.file).toBe(path.join(ROOT, 'patches', 'v1', 'rename_title'));
});

test('a line listed twice runs once; the same module with another comment is another patch', () => {
  const list = parsePatchList('a.b\na.b\na.b # again\n', ROOT);
  expect(list.pre_model_sync.map((p) => p.key)).toEqual(['a.b', 'a.b # again']);
});

test.each([
  ['execute:frappe.db.sql("x")', /2: .* is not a dotted module path/],
  ['../etc/passwd', /2: .* is not a dotted module path/],
  ['patches..v1', /2: .* is not a dotted module path/],
  ['patches/v1/x', /2: .* is not a dotted module path/],
  ['[after_sync]', /2: unknown section \[after_sync\]/],
])('%s is refused with its line', (line, message) => {
  expect(() => parsePatchList(`a.b\n${line}\n`, ROOT)).toThrow(PatchError);
  expect(() => parsePatchList(`a.b\n${line}\n`, ROOT)).toThrow(message);
});
