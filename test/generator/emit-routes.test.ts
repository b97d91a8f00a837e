// Given/want tests for generator/emit/routes.ts: which v1 and v2 routes each kind of DocType's module lists, and how.
import { emitRoutes } from '../../generator/emit/routes';
import { contextOf, docTypeIR } from '../helpers/doctype-ir';

const FULL_V1 = ['list', 'create', 'get', 'update', 'delete'];
const FULL_V2 = [
  'list',
  'create',
  'get',
  'update',
  'delete',
  'copy',
  'count',
  'meta',
  'bulk_update',
  'bulk_delete',
  'bulk_insert',
  'export',
];

const cases: Array<[kind: string, flags: Record<string, unknown>, v1: string[], v2: string[]]> = [
  ['normal', {}, FULL_V1, FULL_V2],
  ['submittable', { is_submittable: 1 }, FULL_V1, FULL_V2],
  ['single', { issingle: 1 }, ['get', 'update'], ['get', 'update', 'meta']],
  ['child table', { istable: 1 }, [], ['meta']],
  ['virtual', { is_virtual: 1 }, [], ['meta']],
];

/** The keys of a module's `routes` object, with the row each names and whether it carries the validator. */
function routeEntries(text: string): Array<[key: string, row: string, validated: boolean]> {
  const body = /export const routes: DocTypeRoutes<Routes> = \{([^]*?)\};/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/\n {2}(\w+): \{ row: row\.(\w+)(, validate: validateBody)? \},/g)].map((m) => [
    m[1] as string,
    m[2] as string,
    m[3] !== undefined,
  ]);
}

/** The DocType operations of a module's routes: its keys but `documentMethod`. */
const operationsOf = (text: string) =>
  routeEntries(text)
    .map(([key]) => key)
    .filter((key) => key !== 'documentMethod');

/** The keys of a module's `Routes` interface. */
const typedKeys = (text: string) =>
  [...(/export interface Routes \{([^]*?)\n\}/.exec(text)?.[1] ?? '').matchAll(/\n {2}(\w+): \{/g)].map(
    (m) => m[1],
  );

describe.each(cases)('%s DocType', (_kind, flags, v1, v2) => {
  const ir = docTypeIR({ name: 'Thing', fields: [{ fieldname: 'title', fieldtype: 'Data' }], ...flags });
  const ctx = contextOf(ir);
  const v1Text = emitRoutes(ir, ctx, 1);
  const v2Text = emitRoutes(ir, ctx, 2);

  test('the v1 module lists its operations', () =>
    expect(operationsOf(v1Text).sort()).toEqual([...v1].sort()));
  test('the v2 module lists its operations', () =>
    expect(operationsOf(v2Text).sort()).toEqual([...v2].sort()));

  test('each route names the table row of its key, with the validator exactly where the body carries documents', () => {
    for (const text of [v1Text, v2Text]) {
      for (const [key, row, validated] of routeEntries(text)) {
        expect(row).toBe(key);
        expect({ key, validated }).toEqual({
          key,
          validated: ['create', 'update', 'bulk_update', 'bulk_insert'].includes(key),
        });
      }
    }
  });

  test('the routes and their types list the same keys; a document method route wherever get is', () => {
    for (const [text, ops] of [
      [v1Text, v1],
      [v2Text, v2],
    ] as const) {
      const keys = routeEntries(text).map(([key]) => key);
      expect(typedKeys(text)).toEqual(keys);
      expect(keys.includes('documentMethod')).toBe(ops.includes('get'));
    }
    expect(v2Text).toContain("import type { Thing } from '../../models/thing';");
    if (v1.length) {
      // Every kind with v1 routes takes a body on some of them: the validator module is required at its first call.
      expect(v1Text).toContain("import { DOCTYPE_ROWS, lazyValidator } from 'doctype-service/internal';");
      expect(v1Text).toContain(
        "const validateBody = lazyValidator(() => require('../../validators/thing') as typeof import('../../validators/thing'));",
      );
      expect(v1Text).not.toMatch(/^import .*validators/m);
      expect(v1Text).toContain('const row = DOCTYPE_ROWS.v1;');
    } else {
      expect(v1Text).toContain('export const routes: DocTypeRoutes<Routes> = {};');
      expect(v1Text).not.toContain('DOCTYPE_ROWS');
    }
  });
});
