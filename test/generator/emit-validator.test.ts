// Given/want tests for generator/emit/validator.ts: coercion, refusal and key stripping of request bodies,
// run both through the emitted standalone module and through ajv compiling bodySchema with AJV_OPTIONS.
import Ajv from 'ajv';
import ts from 'typescript';
import { bodySchema, emitValidator } from '../../generator/emit/validator';
import { AJV_OPTIONS } from '../../generator/ts/ajv-standalone';
import type { BodyValidator } from '../../runtime/registry/registry';
import { contextOf, docTypeIR } from '../helpers/doctype-ir';

const row = docTypeIR({
  name: 'Order Line',
  istable: 1,
  fields: [
    { fieldname: 'item', fieldtype: 'Data' },
    { fieldname: 'qty', fieldtype: 'Int' },
  ],
});
const order = docTypeIR({
  name: 'Order',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', length: 5 },
    { fieldname: 'count', fieldtype: 'Int' },
    { fieldname: 'done', fieldtype: 'Check' },
    { fieldname: 'status', fieldtype: 'Select', options: 'Open\nClosed' },
    { fieldname: 'due', fieldtype: 'Date' },
    { fieldname: 'lines', fieldtype: 'Table', options: 'Order Line' },
    { fieldname: 'section', fieldtype: 'Section Break' },
  ],
});
const ctx = contextOf(order, row);

/** Runs the emitted module (TypeScript transpiled to CommonJS) and returns its create validator. */
function emittedValidator(): BodyValidator {
  const { outputText } = ts.transpileModule(emitValidator(order, ctx), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const exports: Record<string, unknown> = {};
  new Function('exports', 'require', outputText)(exports, require);
  return exports.validateBody as BodyValidator;
}

const validators: Array<[string, BodyValidator]> = [
  ['emitted module', emittedValidator()],
  ['bodySchema + AJV_OPTIONS', new Ajv(AJV_OPTIONS).compile(bodySchema(order, ctx)) as BodyValidator],
];

type Body = Record<string, unknown>;
const accepted: Array<[string, Body, Body]> = [
  ['Int "5" is coerced to 5', { count: '5' }, { count: 5 }],
  ['Check true is coerced to 1', { done: true }, { done: 1 }],
  ['Check "0" is coerced to 0', { done: '0' }, { done: 0 }],
  ['Select blank and null are allowed', { status: '', due: null }, { status: '', due: null }],
  ['unknown keys are removed', { title: 'a', nope: 1, section: 'x' }, { title: 'a' }],
  ['__proto__ is removed', JSON.parse('{"title":"a","__proto__":{"polluted":1}}') as Body, { title: 'a' }],
  [
    'child rows are coerced and lose parent keys',
    {
      lines: [
        { item: 'x', qty: '2', parent: 'O-1', parenttype: 'Order', parentfield: 'lines', idx: '1', junk: 1 },
      ],
    },
    { lines: [{ item: 'x', qty: 2, idx: 1 }] },
  ],
];
const refused: Array<[string, Body, string]> = [
  ['Check "yes"', { done: 'yes' }, '/done'],
  ['Check 2', { done: 2 }, '/done'],
  ['Int "five"', { count: 'five' }, '/count'],
  ['Select outside its options', { status: 'Pending' }, '/status'],
  ['Data longer than its length', { title: 'abcdef' }, '/title'],
  ['Date in another format', { due: '31-01-2024' }, '/due'],
  ['a child row field of the wrong type', { lines: [{ qty: 'many' }] }, '/lines/0/qty'],
  ['rows that are not an array', { lines: 'x' }, '/lines'],
];

describe.each(validators)('%s', (_name, validate) => {
  test.each(accepted)('%s', (_case, body, want) => {
    expect(validate(body)).toBe(true);
    expect(body).toStrictEqual(want);
    expect(Object.prototype.hasOwnProperty.call(body, '__proto__')).toBe(false);
    expect(({} as Body).polluted).toBeUndefined();
  });

  test.each(refused)('refuses %s', (_case, body, pointer) => {
    expect(validate(body)).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toContain(pointer);
  });
});
