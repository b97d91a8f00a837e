// The fields that may link to each DocType, worked out once per registry: Links by their target, Dynamic Links to every
// DocType (or those their Select lists), child rows and Singles marked as such; the DocTypes Frappe ignores on delete,
// settled fields, virtual DocTypes, and targets that cannot be deleted (child tables, Singles) or that nothing links to
// left out.
import { linkSourcesByTarget, type LinkSource } from '../../runtime/back-links/link-sources';
import { createRegistry, type DocTypeEntry } from '../../runtime/registry/registry';
import { CLIENT_GRANT_LINKS } from '../../runtime/oauth/document-revocation';
import { registry as repoRegistry } from '../../generated';
import { docTypeIR } from '../helpers/doctype-ir';

/** A registry entry holding only metadata (all linkSourcesByTarget reads). */
function entry(raw: { name: string } & Record<string, unknown>): DocTypeEntry {
  const { meta } = docTypeIR(raw);
  return { meta, model: undefined as never, validateBody: () => true, v1: {}, v2: {} };
}

const link = (fieldname: string, options: string) => ({ fieldname, fieldtype: 'Link', options });
const dynamic = (fieldname: string, options: string) => ({ fieldname, fieldtype: 'Dynamic Link', options });

const registry = createRegistry([
  entry({ name: 'Target', fields: [link('parent_target', 'Target')] }),
  entry({ name: 'Lonely', fields: [] }),
  entry({
    name: 'Holder',
    fields: [
      link('target', 'Target'),
      link('missing', 'No Such DocType'),
      { fieldname: 'ref_type', fieldtype: 'Link', options: 'DocType' },
      dynamic('ref_name', 'ref_type'),
      { fieldname: 'rows', fieldtype: 'Table', options: 'Holder Row' },
    ],
  }),
  entry({
    name: 'Holder Row',
    istable: 1,
    fields: [
      link('target', 'Target'),
      { fieldname: 'kind', fieldtype: 'Select', options: '\nTarget' },
      dynamic('kind_name', 'kind'),
    ],
  }),
  entry({ name: 'Holder Settings', issingle: 1, fields: [link('target', 'Target')] }),
  // Virtual: no table to look in, nor documents the lifecycle deletes.
  entry({ name: 'Remote Holder', is_virtual: 1, fields: [link('target', 'Target')] }),
  // Ignored on delete (Frappe's list): neither its Links nor its Dynamic Links count, nor its child rows'.
  entry({
    name: 'ToDo',
    fields: [
      link('target', 'Target'),
      { fieldname: 'reference_type', fieldtype: 'Link', options: 'DocType' },
      dynamic('reference_name', 'reference_type'),
      { fieldname: 'rows', fieldtype: 'Table', options: 'Holder Row' },
    ],
  }),
]);

/** The sources of `target` as `holder doctype.field[→doctypeField]` lines, sorted. */
function describe(sources: readonly LinkSource[] | undefined): string[] {
  return (sources ?? [])
    .map((s) => `${s.holder} ${s.doctype}.${s.fieldname}${s.doctypeField ? `→${s.doctypeField}` : ''}`)
    .sort();
}

test.each([
  [
    'Target',
    [
      'child Holder Row.kind_name→kind',
      'child Holder Row.target',
      'document Holder.ref_name→ref_type',
      'document Holder.target',
      'document Target.parent_target',
      'single Holder Settings.target',
    ],
  ],
  // Only the Dynamic Link whose DocType field is free (the Select lists Target only).
  ['Lonely', ['document Holder.ref_name→ref_type']],
  ['Holder', ['document Holder.ref_name→ref_type']],
  // Nothing deletes a child row or a Single on its own.
  ['Holder Row', []],
  ['Holder Settings', []],
  ['Remote Holder', []],
])('the fields that may link to %s', (target, want) => {
  expect(describe(linkSourcesByTarget(registry).get(target))).toEqual(want);
});

test('a child row names the ignored parents whose rows do not count', () => {
  const rows = linkSourcesByTarget(registry)
    .get('Target')
    ?.filter((s) => s.doctype === 'Holder Row');
  expect(rows?.map((s) => [s.table, s.ignoredParents])).toEqual([
    ['tabHolder Row', ['ToDo']],
    ['tabHolder Row', ['ToDo']],
  ]);
});

test('a DocType nothing may link to has no entry, so its deletes run no check', () => {
  const lonely = createRegistry([
    entry({ name: 'Lonely', fields: [] }),
    entry({ name: 'Other', fields: [] }),
  ]);
  expect([...linkSourcesByTarget(lonely).keys()]).toEqual([]);
});

test("the repo's DocTypes: an OAuth Client's grant rows count unless settled; logs and ToDo never do", () => {
  const client = (settled: readonly { doctype: string; fieldname: string }[]) =>
    describe(linkSourcesByTarget(repoRegistry, settled).get('OAuth Client'));
  expect(client([])).toEqual([
    'document OAuth Authorization Code.client',
    'document OAuth Bearer Token.client',
    'document User Permission.for_value→allow',
  ]);
  expect(client(CLIENT_GRANT_LINKS)).toEqual(['document User Permission.for_value→allow']);
  // Not ToDo's allocated_to and assigned_by, nor API Request Log's user.
  expect(describe(linkSourcesByTarget(repoRegistry, CLIENT_GRANT_LINKS).get('User'))).toEqual([
    'child Note Seen By.user',
    'document OAuth Authorization Code.user',
    'document OAuth Bearer Token.user',
    'document OAuth Client.user',
    'document User Permission.for_value→allow',
    'document User Permission.user',
  ]);
});
