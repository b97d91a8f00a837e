// Tests for the validate phase: one table row per rule, plus all real Frappe/ERPNext fixtures together.
import { existsSync } from 'node:fs';
import path from 'node:path';
import rawSchema from '../../generator/doctype.schema.json';
import { loadDocTypes, type LoadedDocType } from '../../generator/load-doctypes';
import type { Problem } from '../../generator/problems';
import { docTypeSchema, validateDocTypes } from '../../generator/validate-doctypes';
import { FIELD_TYPES } from '../../runtime/meta/field-types';
import { RIGHTS } from '../../runtime/meta/types';

type Json = Record<string, unknown>;

/** A LoadedDocType for `json`, in file `<root>/<slug>.json`. */
function doc(json: Json, file = 'doctypes/note.json', root = 'doctypes'): LoadedDocType {
  return { file, relative: file.slice(root.length + 1), root, json, sha1: '0'.repeat(40) };
}

/** A valid DocType named Note, with `extra` merged over it. */
function note(extra: Json = {}): Json {
  return {
    doctype: 'DocType',
    name: 'Note',
    module: 'Desk',
    fields: [{ fieldname: 'title', fieldtype: 'Data' }],
    ...extra,
  };
}

/** Note with the given fields. */
const withFields = (fields: Json[], extra: Json = {}): Json => note({ fields, ...extra });

const child = (name: string, file: string): LoadedDocType =>
  doc({ doctype: 'DocType', name, istable: 1, fields: [{ fieldname: 'item', fieldtype: 'Data' }] }, file);

interface Want {
  file?: string;
  pointer: string;
  severity?: Problem['severity'];
  message: string;
}

const F = 'doctypes/note.json';

const cases: Array<[string, LoadedDocType[], Want[]]> = [
  ['valid minimal DocType', [doc(note())], []],
  [
    'empty fields, booleans for flags, unknown properties',
    [doc(note({ fields: [], istable: true, issingle: false, whatever: { x: 1 } }))],
    [],
  ],
  [
    'missing name',
    [doc({ doctype: 'DocType', fields: [] })],
    [{ pointer: '', message: 'missing required property "name"' }],
  ],
  [
    'missing fields',
    [doc({ doctype: 'DocType', name: 'Note' })],
    [{ pointer: '', message: 'missing required property "fields"' }],
  ],
  [
    'doctype must be DocType',
    [doc(note({ doctype: 'Doc' }))],
    [{ pointer: '/doctype', message: 'must be "DocType", got "Doc"' }],
  ],
  ['name with a slash', [doc(note({ name: 'A/B' }))], [{ pointer: '/name', message: 'must not contain' }]],
  ['name with a backtick', [doc(note({ name: 'A`B' }))], [{ pointer: '/name', message: 'must not contain' }]],
  [
    'name with leading space',
    [doc(note({ name: ' Note' }))],
    [{ pointer: '/name', message: 'must not start or end with a space' }],
  ],
  [
    'name too long',
    [doc(note({ name: 'N'.repeat(62) }))],
    [{ pointer: '/name', message: 'more than 61 characters' }],
  ],
  ['empty name', [doc(note({ name: '' }))], [{ pointer: '/name', message: 'fewer than 1 characters' }]],
  [
    'fields not an array',
    [doc(note({ fields: {} }))],
    [{ pointer: '/fields', message: 'must be array, got an object' }],
  ],
  [
    'module not a string',
    [doc(note({ module: 3 }))],
    [{ pointer: '/module', message: 'must be string, got 3' }],
  ],
  ['flag not 0/1', [doc(note({ istable: 2 }))], [{ pointer: '/istable', message: 'must be 0 or 1, got 2' }]],
  [
    'autoname wrong type',
    [doc(note({ autoname: 5 }))],
    [{ pointer: '/autoname', message: 'must be string or null, got 5' }],
  ],
  [
    'sort_order not ASC/DESC',
    [doc(note({ sort_order: 'up' }))],
    [{ pointer: '/sort_order', message: 'must be one of "ASC", "DESC", "asc", "desc", got "up"' }],
  ],
  [
    'permission without role',
    [doc(note({ permissions: [{ read: 1 }] }))],
    [{ pointer: '/permissions/0', message: 'missing required property "role"' }],
  ],
  [
    'permission bad permlevel and right',
    [doc(note({ permissions: [{ role: 'All', permlevel: -1, write: 2 }] }))],
    [
      { pointer: '/permissions/0/permlevel', message: 'must be >= 0' },
      { pointer: '/permissions/0/write', message: 'must be 0 or 1' },
    ],
  ],
  [
    'unknown field type',
    [doc(withFields([{ fieldname: 'x', fieldtype: 'Lnk' }]))],
    [{ pointer: '/fields/0/fieldtype', message: 'unknown field type "Lnk" (did you mean "Link"?)' }],
  ],
  [
    'missing fieldtype',
    [doc(withFields([{ fieldname: 'x' }]))],
    [{ pointer: '/fields/0', message: 'missing required property "fieldtype"' }],
  ],
  [
    'missing fieldname on a data field',
    [doc(withFields([{ fieldtype: 'Data' }]))],
    [{ pointer: '/fields/0', message: 'missing required property "fieldname"' }],
  ],
  [
    'layout fields may lack a fieldname or have a loose one',
    [doc(withFields([{ fieldtype: 'Section Break' }, { fieldtype: 'Column Break', fieldname: '2_col' }]))],
    [],
  ],
  [
    'bad fieldname',
    [doc(withFields([{ fieldname: '2abc', fieldtype: 'Data' }]))],
    [{ pointer: '/fields/0/fieldname', message: 'must start with a letter or _' }],
  ],
  [
    'field property types',
    [
      doc(
        withFields([
          {
            fieldname: 'x',
            fieldtype: 'Float',
            label: 1,
            reqd: 'yes',
            permlevel: 10,
            length: -1,
            default: {},
            precision: 1.5,
          },
        ]),
      ),
    ],
    [
      { pointer: '/fields/0/default', message: 'must be string or number or null, got an object' },
      { pointer: '/fields/0/label', message: 'must be string, got 1' },
      { pointer: '/fields/0/length', message: 'must be >= 0' },
      { pointer: '/fields/0/permlevel', message: 'must be <= 9' },
      { pointer: '/fields/0/precision', message: 'must be string or integer, got 1.5' },
      { pointer: '/fields/0/reqd', message: 'must be 0 or 1, got "yes"' },
    ],
  ],
  [
    'duplicate DocType name in one root',
    [doc(note(), 'doctypes/a.json'), doc(note(), 'doctypes/b.json')],
    [
      {
        file: 'doctypes/b.json',
        pointer: '/name',
        message: 'defined twice: in doctypes/a.json and in doctypes/b.json',
      },
    ],
  ],
  [
    'duplicate DocType name across roots is a warning',
    [doc(note(), 'app1/a.json', 'app1'), doc(note(), 'app2/b.json', 'app2')],
    [
      {
        file: 'app2/b.json',
        pointer: '/name',
        severity: 'warning',
        message: 'in app1/a.json and in app2/b.json',
      },
    ],
  ],
  [
    'duplicate fieldname',
    [
      doc(
        withFields([
          { fieldname: 'a', fieldtype: 'Data' },
          { fieldname: 'b', fieldtype: 'Data' },
          { fieldname: 'a', fieldtype: 'Int' },
        ]),
      ),
    ],
    [{ pointer: '/fields/2/fieldname', message: 'duplicate fieldname "a" (first at /fields/0)' }],
  ],
  [
    'fieldnames differing only in case, or from a standard column, are one column on SQLite and MariaDB',
    [
      doc(
        withFields([
          { fieldname: 'qty', fieldtype: 'Int' },
          { fieldname: 'Qty', fieldtype: 'Int' },
          { fieldname: 'Name', fieldtype: 'Data' },
          { fieldname: 'DocStatus', fieldtype: 'Int' },
        ]),
      ),
    ],
    [
      {
        pointer: '/fields/1/fieldname',
        message: 'fieldname "Qty" differs from "qty" (at /fields/0) only in case',
      },
      {
        pointer: '/fields/2/fieldname',
        message: 'clashes with the standard column "name": column names ignore case',
      },
      {
        pointer: '/fields/3/fieldname',
        message: 'clashes with the standard column "docstatus": column names ignore case',
      },
    ],
  ],
  [
    'fieldname clashes with a standard column',
    [
      doc(
        withFields([
          { fieldname: 'modified', fieldtype: 'Check' },
          { fieldname: 'doctype', fieldtype: 'Data' },
          { fieldname: 'name', fieldtype: 'Data' },
        ]),
      ),
    ],
    [
      { pointer: '/fields/0/fieldname', message: 'clashes with the standard column "modified"' },
      { pointer: '/fields/1/fieldname', message: 'clashes with the standard column "doctype"' },
      { pointer: '/fields/2/fieldname', message: 'clashes with the standard column "name"' },
    ],
  ],
  [
    'fetch_from naming no Link field, or a field the linked DocType lacks, is a warning',
    [
      doc(
        withFields([
          { fieldname: 'item', fieldtype: 'Link', options: 'Item' },
          { fieldname: 'item_name', fieldtype: 'Data', fetch_from: 'item.item_name' },
          { fieldname: 'old_name', fieldtype: 'Data', fetch_from: 'item.renamed_away' },
          { fieldname: 'loose', fieldtype: 'Data', fetch_from: 'title' },
        ]),
      ),
      doc(
        { doctype: 'DocType', name: 'Item', fields: [{ fieldname: 'item_name', fieldtype: 'Data' }] },
        'doctypes/item.json',
      ),
    ],
    [
      {
        pointer: '/fields/2/fetch_from',
        severity: 'warning',
        message: 'fetch_from "item.renamed_away": Item has no field "renamed_away"',
      },
      {
        pointer: '/fields/3/fetch_from',
        severity: 'warning',
        message: 'fetch_from "title" does not name a Link field',
      },
    ],
  ],
  [
    'a fieldname or table name PostgreSQL would cut (over 63 bytes)',
    [
      doc(
        withFields(
          [
            { fieldname: 'h'.repeat(63), fieldtype: 'Data' },
            { fieldname: 'g'.repeat(64), fieldtype: 'Data' },
          ],
          { name: `N${'é'.repeat(30)}` },
        ),
      ),
    ],
    [
      { pointer: '/fields/1/fieldname', message: 'is 64 characters long: at most 63' },
      { pointer: '/name', message: 'is 64 bytes long: at most 63 (PostgreSQL cuts longer table names)' },
    ],
  ],
  [
    'redeclaring a standard column with its own kind is a warning',
    [
      doc(
        withFields([
          { fieldname: 'idx', fieldtype: 'Int' },
          { fieldname: 'x', fieldtype: 'Section Break' },
        ]),
      ),
    ],
    [
      {
        pointer: '/fields/0/fieldname',
        severity: 'warning',
        message: 'redeclares the standard column "idx" as Int',
      },
    ],
  ],
  [
    'redeclaring idx with another kind is an error',
    [doc(withFields([{ fieldname: 'idx', fieldtype: 'Data' }]))],
    [{ pointer: '/fields/0/fieldname', message: 'clashes with the standard column "idx"' }],
  ],
  [
    'parent columns are standard only in child tables',
    [
      doc(withFields([{ fieldname: 'parent', fieldtype: 'Data' }]), 'doctypes/a.json'),
      doc(
        withFields([{ fieldname: 'parentfield', fieldtype: 'Check' }], { name: 'Row', istable: 1 }),
        'doctypes/b.json',
      ),
    ],
    [
      {
        file: 'doctypes/b.json',
        pointer: '/fields/0/fieldname',
        message: 'clashes with the standard column "parentfield"',
      },
    ],
  ],
  [
    'Link without options',
    [
      doc(
        withFields([
          { fieldname: 'a', fieldtype: 'Link' },
          { fieldname: 'b', fieldtype: 'Link', options: ' ' },
        ]),
      ),
    ],
    [
      { pointer: '/fields/0', message: 'Link field "a" needs options' },
      { pointer: '/fields/1/options', message: 'Link field "b" needs options' },
    ],
  ],
  [
    'Link to a DocType outside the set is a warning',
    [doc(withFields([{ fieldname: 'u', fieldtype: 'Link', options: 'User' }]))],
    [
      {
        pointer: '/fields/0/options',
        severity: 'warning',
        message: 'points to DocType "User", which is not in this set',
      },
    ],
  ],
  [
    'Table without options',
    [doc(withFields([{ fieldname: 'rows', fieldtype: 'Table', options: null }]))],
    [{ pointer: '/fields/0/options', message: 'Table field "rows" needs options' }],
  ],
  [
    'Table targets: child ok, outside set warns, non-child errs',
    [
      child('Note Row', 'doctypes/row.json'),
      doc(
        withFields([
          { fieldname: 'ok', fieldtype: 'Table', options: 'Note Row' },
          { fieldname: 'missing', fieldtype: 'Table MultiSelect', options: 'Elsewhere' },
          { fieldname: 'self', fieldtype: 'Table', options: 'Note' },
        ]),
      ),
    ],
    [
      {
        pointer: '/fields/1/options',
        severity: 'warning',
        message: 'Table MultiSelect field "missing" points to DocType "Elsewhere", which is not in this set',
      },
      {
        pointer: '/fields/2/options',
        message: `points to DocType "Note" (${F}), which is not a child table`,
      },
    ],
  ],
  [
    'Dynamic Link options must name another field',
    [
      doc(
        withFields([
          { fieldname: 'ref_type', fieldtype: 'Link', options: 'Note' },
          { fieldname: 'ok', fieldtype: 'Dynamic Link', options: 'ref_type' },
          { fieldname: 'bad', fieldtype: 'Dynamic Link', options: 'nope' },
          { fieldname: 'me', fieldtype: 'Dynamic Link', options: 'me' },
          { fieldname: 'none', fieldtype: 'Dynamic Link' },
        ]),
      ),
    ],
    [
      {
        pointer: '/fields/2/options',
        message: 'Dynamic Link field "bad" needs options naming another field',
      },
      { pointer: '/fields/3/options', message: 'Dynamic Link field "me" needs options naming another field' },
      { pointer: '/fields/4', message: 'Dynamic Link field "none" needs options' },
    ],
  ],
  [
    'Select options must be a string',
    [
      doc(
        withFields([
          { fieldname: 'a', fieldtype: 'Select', options: 'One\nTwo' },
          { fieldname: 'b', fieldtype: 'Select', options: null },
          { fieldname: 'c', fieldtype: 'Select', options: 3 },
        ]),
      ),
    ],
    [
      { pointer: '/fields/1/options', message: 'Select field "b" options must be a string' },
      { pointer: '/fields/2/options', message: 'must be string or null, got 3' },
    ],
  ],
  [
    'autoname field: must name a field',
    [doc(note({ autoname: 'field:subject' }))],
    [
      {
        pointer: '/autoname',
        message: 'autoname "field:subject" names field "subject", which this DocType does not have',
      },
    ],
  ],
  ['autoname field: naming an existing field is fine', [doc(note({ autoname: 'field:title' }))], []],
  [
    'title_field / sort_field not a field is a warning',
    [doc(note({ title_field: 'subject', sort_field: 'creation_date' }))],
    [
      { pointer: '/sort_field', severity: 'warning', message: 'sort_field "creation_date" is not a field' },
      { pointer: '/title_field', severity: 'warning', message: 'title_field "subject" is not a field' },
    ],
  ],
  ['sort_field may be a standard column', [doc(note({ title_field: 'title', sort_field: 'modified' }))], []],
  [
    'child table cannot be single',
    [doc(note({ istable: 1, issingle: 1 }))],
    [{ pointer: '/issingle', message: 'cannot also be a single' }],
  ],
];

/** Asserts `got` is exactly the wanted problems, in order (message compared as a fragment). */
function expectProblems(got: Problem[], want: Want[]): void {
  const shape = (p: Want | Problem) => ({
    file: p.file ?? F,
    pointer: p.pointer,
    severity: p.severity ?? 'error',
  });
  expect(got.map(shape)).toEqual(want.map(shape));
  want.forEach((w, i) => expect(got[i]!.message).toContain(w.message));
}

describe('validateDocTypes', () => {
  test.each(cases)('%s', (_name, docs, want) => expectProblems(validateDocTypes(docs), want));

  test('unknown field type message does not list every type', () => {
    const [problem] = validateDocTypes([doc(withFields([{ fieldname: 'x', fieldtype: 'Wat' }]))]);
    expect(problem!.message).toBe('unknown field type "Wat"');
  });

  test('reports every problem of several broken files in one call, sorted by file then pointer', () => {
    const fields = Array.from({ length: 12 }, (_, i) => ({ fieldname: `f${i}`, fieldtype: 'Data' }));
    fields[2] = { fieldname: 'f2', fieldtype: 'Lnk' };
    fields[10] = { fieldname: 'f10', fieldtype: 'Link' };
    const problems = validateDocTypes([
      doc(withFields(fields, { istable: 1, issingle: 1 }), 'doctypes/b.json'),
      doc(
        {
          doctype: 'DocType',
          name: 'A<',
          fields: [{ fieldname: 'name', fieldtype: 'Data' }, { fieldtype: 'Int' }],
        },
        'doctypes/a.json',
      ),
    ]);
    expect(problems.map((p) => `${p.file}#${p.pointer}`)).toEqual([
      'doctypes/a.json#/fields/0/fieldname',
      'doctypes/a.json#/fields/1',
      'doctypes/a.json#/name',
      'doctypes/b.json#/fields/2/fieldtype',
      'doctypes/b.json#/fields/10',
      'doctypes/b.json#/issingle',
    ]);
    expect(problems.every((p) => p.severity === 'error')).toBe(true);
  });

  test('schema: field-type enum comes from FIELD_TYPES, not the JSON file', () => {
    expect((rawSchema.definitions.fieldType as { enum?: unknown }).enum).toBeUndefined();
    expect((docTypeSchema.definitions.fieldType as { enum?: unknown }).enum).toEqual([...FIELD_TYPES]);
    for (const layout of rawSchema.definitions.layoutType.enum) expect(FIELD_TYPES).toContain(layout);
    for (const right of RIGHTS)
      expect(Object.keys(rawSchema.definitions.permission.properties)).toContain(right);
  });
});

const fixtures = path.resolve(__dirname, '../../../shared/fixtures');
const haveFixtures =
  existsSync(path.join(fixtures, 'frappe-v15')) && existsSync(path.join(fixtures, 'erpnext-v15'));
if (!haveFixtures) console.log(`skipping real-fixture validation: ${fixtures} is absent`);

(haveFixtures ? test : test.skip)(
  'all real Frappe and ERPNext v15 DocTypes validate together with no errors',
  () => {
    const { doctypes, problems: loadProblems } = loadDocTypes([
      path.join(fixtures, 'frappe-v15'),
      path.join(fixtures, 'erpnext-v15'),
    ]);
    expect(loadProblems).toEqual([]);
    expect(doctypes).toHaveLength(768);
    const problems = validateDocTypes(doctypes);
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors).toEqual([]);
    console.log(`${doctypes.length} real DocTypes: 0 errors, ${problems.length} warnings`);
  },
);
