// DocType names that differ but would generate the same file, identifier or class name are refused by the validate
// phase (they used to overwrite each other silently); a leading digit still gives a valid registry identifier.
import ts from 'typescript';
import { emitRegistry } from '../../generator/emit/registry';
import type { LoadedDocType } from '../../generator/load-doctypes';
import { moduleIdentifier } from '../../generator/naming';
import { validateDocTypes } from '../../generator/validate-doctypes';
import { contextOf, docTypeIR } from '../helpers/doctype-ir';

/** A minimal valid DocType file named `name`, at `doctypes/<n>.json` so files sort in argument order. */
const file = (name: string, n: number): LoadedDocType => ({
  file: `doctypes/${n}.json`,
  relative: `${n}.json`,
  root: 'doctypes',
  json: { doctype: 'DocType', name, fields: [{ fieldname: 'title', fieldtype: 'Data' }] },
  sha1: '0'.repeat(40),
});
const problemsOf = (...names: string[]) =>
  validateDocTypes(names.map(file)).map((p) => `${p.file} ${p.severity}: ${p.message}`);

const cases: Array<[names: string[], want: string[]]> = [
  [
    ['Sales Order', 'Sales Invoice', 'Sales-Order'],
    [
      'doctypes/2.json error: DocType "Sales-Order" generates the file name "sales_order", the same as that of DocType "Sales Order"',
    ],
  ],
  [
    ['ToDo', 'Todo'],
    [
      'doctypes/1.json error: DocType "Todo" generates the file name "todo", the same as that of DocType "ToDo"',
    ],
  ],
  [
    ['A B', 'A.B'],
    [
      'doctypes/1.json error: DocType "A.B" generates the module identifier "a_b", the same as that of DocType "A B"',
    ],
  ],
  [
    ['Has Role', 'HasRole'],
    [
      'doctypes/1.json error: DocType "HasRole" generates the class name "HasRole", the same as that of DocType "Has Role"',
    ],
  ],
  [
    ['Model'],
    [
      'doctypes/0.json error: DocType "Model" generates the class name "Model", the same as the name generated code imports from objection',
    ],
  ],
  [
    ['Doc Type Meta'],
    [
      'doctypes/0.json error: DocType "Doc Type Meta" generates the class name "DocTypeMeta", the same as the name generated code imports from doctype-service/internal',
    ],
  ],
  [
    ['Doc Type Routes'],
    [
      'doctypes/0.json error: DocType "Doc Type Routes" generates the class name "DocTypeRoutes", the same as the name generated code imports from doctype-service/internal',
    ],
  ],
  [['Has Role', 'Has Roles', 'Role', '2FA Settings', 'Item Model'], []],
];

test.each(cases)('%j', (names, want) => expect(problemsOf(...names)).toEqual(want));

test('a DocType name starting with a digit gets a registry identifier that parses', () => {
  expect(moduleIdentifier('2FA Settings')).toBe('_2fa_settings');
  const text = emitRegistry(contextOf(docTypeIR({ name: '2FA Settings' })));
  expect(text).toContain("import * as _2fa_settings_model from './models/2fa_settings';");
  const { diagnostics } = ts.transpileModule(text, { reportDiagnostics: true });
  expect(diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
});
