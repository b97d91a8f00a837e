// Builds small DocType IRs for emitter tests from partial Frappe DocType JSON, the way the normalize phase does.
import { createContext, type GeneratorContext } from '../../generator/context';
import { scrub } from '../../generator/naming';
import { normalizeDocType, type DocTypeIR } from '../../generator/normalize';

/** A DocType IR for `raw` (name, fields, flags, ...) as if loaded from `doctypes/test/<slug>/<slug>.json`. */
export function docTypeIR(raw: { name: string } & Record<string, unknown>): DocTypeIR {
  const slug = scrub(raw.name);
  const relative = `test/${slug}/${slug}.json`;
  const json = { doctype: 'DocType', module: 'Test', fields: [], ...raw };
  return normalizeDocType({
    file: `doctypes/${relative}`,
    relative,
    root: 'doctypes',
    json,
    sha1: '0'.repeat(40),
  });
}

/** A generator context over the given IRs (sorted by name, as the normalize phase leaves them). */
export function contextOf(...irs: DocTypeIR[]): GeneratorContext {
  const sorted = [...irs].sort((a, b) =>
    a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0,
  );
  return createContext(sorted, 'generated');
}

/** The normalized field `fieldname` of `ir`; throws when it is missing (a typo in the test). */
export function fieldOf(ir: DocTypeIR, fieldname: string): DocTypeIR['meta']['fields'][number] {
  const field = ir.meta.fields.find((f) => f.fieldname === fieldname);
  if (!field) throw new Error(`${ir.meta.name} has no field ${fieldname}`);
  return field;
}
