// Given/want tests for generator/emit/model.ts: the TypeScript type of each field type family, and the model module.
import { emitModel, fieldTsType } from '../../generator/emit/model';
import { contextOf, docTypeIR, fieldOf } from '../helpers/doctype-ir';

const row = docTypeIR({ name: 'Task Row', istable: 1, fields: [{ fieldname: 'item', fieldtype: 'Data' }] });
const task = docTypeIR({
  name: 'Task',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'status', fieldtype: 'Select', options: 'Open\nClosed' },
    { fieldname: 'priority', fieldtype: 'Select', options: '\nLow\nHigh\nLow' },
    { fieldname: 'kind', fieldtype: 'Select' },
    { fieldname: 'done', fieldtype: 'Check' },
    { fieldname: 'count', fieldtype: 'Int' },
    { fieldname: 'big', fieldtype: 'Long Int' },
    { fieldname: 'amount', fieldtype: 'Currency' },
    { fieldname: 'ratio', fieldtype: 'Percent' },
    { fieldname: 'due', fieldtype: 'Date' },
    { fieldname: 'at', fieldtype: 'Datetime' },
    { fieldname: 'starts', fieldtype: 'Time' },
    { fieldname: 'notes', fieldtype: 'Text Editor' },
    { fieldname: 'owner_user', fieldtype: 'Link', options: 'User' },
    { fieldname: 'data', fieldtype: 'JSON' },
    { fieldname: 'rows', fieldtype: 'Table', options: 'Task Row' },
    { fieldname: 'tags', fieldtype: 'Table MultiSelect', options: 'Not In Set' },
  ],
});
const ctx = contextOf(task, row);

const cases: Array<[fieldname: string, want: string]> = [
  ['title', 'string'],
  ['status', "'Open' | 'Closed'"],
  ['priority', "'' | 'Low' | 'High'"],
  ['kind', 'string'],
  ['done', '0 | 1'],
  ['count', 'number'],
  ['big', 'number'],
  ['amount', 'number'],
  ['ratio', 'number'],
  ['due', 'string'],
  ['at', 'string'],
  ['starts', 'string'],
  ['notes', 'string'],
  ['owner_user', 'string'],
  ['data', 'unknown'],
  ['rows', 'TaskRow[]'],
  ['tags', 'Record<string, unknown>[]'],
];

describe('fieldTsType', () => {
  test.each(cases)('%s → %s', (fieldname, want) =>
    expect(fieldTsType(fieldOf(task, fieldname), ctx)).toBe(want),
  );
});

describe('emitModel', () => {
  const text = emitModel(task, ctx);

  test('required fields are not optional; others are optional and nullable', () => {
    expect(text).toMatch(/^ {2}title: string \| null;$/m);
    expect(text).toMatch(/^ {2}status\?: 'Open' \| 'Closed' \| null;$/m);
    expect(text).toMatch(/^ {2}rows\?: TaskRow\[\];$/m);
  });

  test('imports the child model and maps the child table as a HasMany relation filtered by parentfield', () => {
    expect(text).toContain("import { TaskRow, TaskRowModel } from './task_row';");
    expect(text).toContain('modelClass: TaskRowModel');
    expect(text).toContain("join: { from: 'tabTask.name', to: 'tabTask Row.parent' }");
    expect(text).toContain("filter: { parentfield: 'rows', parenttype: 'Task' }");
  });

  test('a child table interface carries the parent columns', () => {
    const child = emitModel(row, ctx);
    for (const column of ['parent', 'parentfield', 'parenttype'])
      expect(child).toMatch(new RegExp(`^ {2}${column}: string;$`, 'm'));
    expect(text).not.toMatch(/^ {2}parenttype: string;$/m);
  });
});
