// Given/want tests for generator/emit/routes.ts: which v1 and v2 operations each kind of DocType answers.
import { emitRoutes, v1Operations, v2Operations } from '../../generator/emit/routes';
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
];

const cases: Array<[kind: string, flags: Record<string, unknown>, v1: string[], v2: string[]]> = [
  ['normal', {}, FULL_V1, FULL_V2],
  ['submittable', { is_submittable: 1 }, FULL_V1, FULL_V2],
  ['single', { issingle: 1 }, ['get', 'update'], ['get', 'update', 'meta']],
  ['child table', { istable: 1 }, [], ['meta']],
  ['virtual', { is_virtual: 1 }, [], ['meta']],
];

describe.each(cases)('%s DocType', (_kind, flags, v1, v2) => {
  const ir = docTypeIR({ name: 'Thing', fields: [{ fieldname: 'title', fieldtype: 'Data' }], ...flags });

  test('v1Operations', () => expect(v1Operations(ir)).toEqual(v1));
  test('v2Operations', () => expect(v2Operations(ir)).toEqual(v2));

  test('the emitted modules export exactly those operations, typed by the runtime', () => {
    const ctx = contextOf(ir);
    const v1Text = emitRoutes(ir, ctx, 1);
    const v2Text = emitRoutes(ir, ctx, 2);
    const list = (ops: string[]) => `[${ops.map((op) => `'${op}'`).join(', ')}]`;
    expect(v1Text).toContain(`export const operations: readonly V1Operation[] = ${list(v1)};`);
    expect(v2Text).toContain(`export const operations: readonly V2Operation[] = ${list(v2)};`);
    expect(v1Text).toContain("import type { DocTypeMeta, V1Operation } from 'doctype-service/internal';");
    expect(v2Text).toContain("import type { Thing } from '../../models/thing';");
    // Every operation has a typed route (a route per row, document methods too), and nothing else does.
    for (const op of v2) expect(v2Text).toMatch(new RegExp(`\\n  ${op}: \\{ .*response: `));
    expect(v1Text.match(/\n {2}\w+: \{ /g)?.length ?? 0).toBe(v1.length + (v1.includes('get') ? 1 : 0));
  });
});
