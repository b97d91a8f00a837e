// Our core DocType JSON files: present once each, filed under their slug, and consistent with each other.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', 'doctypes');

const EXPECTED: Record<string, string> = {
  User: 'Core',
  Role: 'Core',
  'Has Role': 'Core',
  'User Permission': 'Core',
  File: 'Core',
  'System Settings': 'Core',
  'API Request Log': 'Core',
  'Server Script': 'Core',
  Version: 'Core',
  'Deleted Document': 'Core',
  ToDo: 'Desk',
  Note: 'Desk',
  'Note Seen By': 'Desk',
  'OAuth Client': 'Integrations',
  'OAuth Bearer Token': 'Integrations',
  'OAuth Authorization Code': 'Integrations',
};

/** DocTypes a Link may point at without our shipping them. */
const EXTERNAL_TARGETS = new Set(['DocType']);

const RIGHTS = [
  'read',
  'write',
  'create',
  'delete',
  'submit',
  'cancel',
  'amend',
  'report',
  'export',
  'share',
  'print',
  'email',
];

interface Field {
  fieldname: string;
  fieldtype: string;
  label: string;
  options?: string;
  [key: string]: unknown;
}

interface DocTypeFile {
  doctype: string;
  name: string;
  module: string;
  istable?: number;
  issingle?: number;
  fields: Field[];
  permissions: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

interface Loaded {
  file: string;
  json: DocTypeFile;
}

const slug = (name: string) => name.toLowerCase().replace(/ /g, '_');

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full);
    return entry.isFile() && entry.name.endsWith('.json') ? [full] : [];
  });
}

const loaded: Loaded[] = walk(ROOT)
  .sort()
  .map((file) => ({
    file: path.relative(ROOT, file).split(path.sep).join('/'),
    json: JSON.parse(fs.readFileSync(file, 'utf8')),
  }))
  .filter((d) => d.json && d.json.doctype === 'DocType');

const byName = new Map<string, Loaded>(loaded.map((d) => [d.json.name, d]));

describe('core DocType files', () => {
  it('ships each expected DocType exactly once', () => {
    for (const name of Object.keys(EXPECTED)) {
      expect({ name, count: loaded.filter((d) => d.json.name === name).length }).toEqual({ name, count: 1 });
    }
  });

  it('has no DocType name twice', () => {
    const names = loaded.map((d) => d.json.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it.each(Object.entries(EXPECTED))('%s sits under its module and slug', (name, module) => {
    const doc = byName.get(name);
    expect(doc).toBeDefined();
    expect(doc!.json.module).toBe(module);
    expect(doc!.file).toBe(`${module.toLowerCase()}/${slug(name)}/${slug(name)}.json`);
  });

  it('files every DocType at <module>/<slug>/<slug>.json', () => {
    for (const { file, json } of loaded) {
      expect(typeof json.name).toBe('string');
      expect(typeof json.module).toBe('string');
      expect(file).toBe(`${json.module.toLowerCase()}/${slug(json.name)}/${slug(json.name)}.json`);
    }
  });

  it('has a well-formed field list', () => {
    for (const { json } of loaded) {
      expect(Array.isArray(json.fields)).toBe(true);
      const names = json.fields.map((f) => f.fieldname);
      expect({ doctype: json.name, duplicates: names.filter((n, i) => names.indexOf(n) !== i) }).toEqual({
        doctype: json.name,
        duplicates: [],
      });
      for (const field of json.fields) {
        expect(typeof field.fieldname).toBe('string');
        expect(typeof field.fieldtype).toBe('string');
        expect(typeof field.label).toBe('string');
        for (const flag of ['reqd', 'unique', 'no_copy', 'read_only', 'hidden'] as const) {
          if (flag in field) expect([0, 1]).toContain(field[flag]);
        }
      }
    }
  });

  it('points every Link and Table at a shipped DocType (or DocType itself)', () => {
    const shipped = new Set(loaded.map((d) => d.json.name));
    for (const { json } of loaded) {
      for (const field of json.fields) {
        if (!['Link', 'Table', 'Table MultiSelect'].includes(field.fieldtype)) continue;
        const target = field.options ?? '';
        const ok = shipped.has(target) || (field.fieldtype === 'Link' && EXTERNAL_TARGETS.has(target));
        expect({ field: `${json.name}.${field.fieldname}`, target, ok }).toEqual({
          field: `${json.name}.${field.fieldname}`,
          target,
          ok: true,
        });
      }
    }
  });

  it('points every Table at a child DocType (istable: 1)', () => {
    for (const { json } of loaded) {
      for (const field of json.fields) {
        if (field.fieldtype !== 'Table' && field.fieldtype !== 'Table MultiSelect') continue;
        expect({
          field: `${json.name}.${field.fieldname}`,
          istable: byName.get(field.options ?? '')?.json.istable,
        }).toEqual({
          field: `${json.name}.${field.fieldname}`,
          istable: 1,
        });
      }
    }
  });

  it('names a role in every permission row, with 0/1 rights', () => {
    for (const { json } of loaded) {
      expect(Array.isArray(json.permissions)).toBe(true);
      for (const row of json.permissions) {
        expect(typeof row.role).toBe('string');
        expect((row.role as string).trim()).not.toBe('');
        for (const right of [...RIGHTS, 'if_owner']) {
          if (right in row) expect([0, 1]).toContain(row[right]);
        }
        if ('permlevel' in row) expect(Number.isInteger(row.permlevel)).toBe(true);
      }
    }
  });

  it('gives child tables no permissions of their own and every other DocType at least one row', () => {
    for (const { json } of loaded) {
      if (json.istable === 1)
        expect({ doctype: json.name, rows: json.permissions.length }).toEqual({
          doctype: json.name,
          rows: 0,
        });
      else expect(json.permissions.length).toBeGreaterThan(0);
    }
  });
});
