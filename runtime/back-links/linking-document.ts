// Finds a document that links to one being deleted or cancelled: one query per field that may hold its name, in the
// operation's transaction, stopping at the first document found.
import type { Knex } from 'knex';
import { SYSTEM_TABLES } from '../db/system-tables';
import type { LinkSource } from './link-sources';

/** The document that holds a link: for a child row, its parent (and the row's position for a Dynamic Link). */
export interface LinkingDocument {
  doctype: string;
  name: string;
  /** The child row's idx, given where Frappe names it (a Dynamic Link in a child row). */
  row?: number;
}

/** docstatus of a cancelled document: its Dynamic Links do not stop a delete, its Links do (Frappe's two checks). */
const CANCELLED = 2;
/** docstatus of a submitted document: only its links stop a cancel. */
const SUBMITTED = 1;

/**
 * What is being checked. A delete: every link stops it but a cancelled document's Dynamic Link. A cancel (Frappe's
 * check_no_back_links_exist): only a submitted document's links and a Single's Link, but for the DocTypes the
 * cancelled document's controller names in `ignore_linked_doctypes`.
 */
export type LinkCheck = { kind: 'delete' } | { kind: 'cancel'; ignored: ReadonlySet<string> };

/** A document or child row of `source` that links to `name` of `doctype`, other than that document itself. */
async function linkingRow(
  trx: Knex,
  source: LinkSource,
  doctype: string,
  name: string,
  check: LinkCheck,
): Promise<LinkingDocument | undefined> {
  const query = trx(source.table).where(source.fieldname, name);
  if (source.doctypeField) query.where(source.doctypeField, doctype);
  if (check.kind === 'cancel') query.where('docstatus', SUBMITTED);
  else if (source.doctypeField) query.whereNot('docstatus', CANCELLED);
  if (source.holder === 'document') {
    if (source.doctype === doctype) query.whereNot('name', name);
    const row = (await query.first('name')) as { name: string } | undefined;
    return row && { doctype: source.doctype, name: String(row.name) };
  }
  // A child row, reported as its parent: the document's own rows and those of ignored parents do not count.
  query.whereNot((own) => own.where('parenttype', doctype).andWhere('parent', name));
  const ignoredParents =
    check.kind === 'cancel' ? [...source.ignoredParents, ...check.ignored] : source.ignoredParents;
  if (ignoredParents.length) query.whereNotIn('parenttype', ignoredParents);
  const row = (await query.first('parent', 'parenttype', 'idx')) as
    { parent: string; parenttype: string; idx: number } | undefined;
  if (!row) return undefined;
  const found: LinkingDocument = { doctype: String(row.parenttype), name: String(row.parent) };
  if (source.doctypeField) found.row = Number(row.idx);
  return found;
}

/** The Single `source` belongs to, when its value (and a Dynamic Link's DocType) points at `name` of `doctype`. */
async function linkingSingle(
  trx: Knex,
  source: LinkSource,
  doctype: string,
  name: string,
): Promise<LinkingDocument | undefined> {
  const fields = source.doctypeField ? [source.fieldname, source.doctypeField] : [source.fieldname];
  const rows = (await trx(SYSTEM_TABLES.singles)
    .select('field', 'value')
    .where('doctype', source.doctype)
    .whereIn('field', fields)) as { field: string; value: string | null }[];
  const value = (field: string) => rows.find((r) => r.field === field)?.value;
  const links =
    value(source.fieldname) === name && (!source.doctypeField || value(source.doctypeField) === doctype);
  return links ? { doctype: source.doctype, name: source.doctype } : undefined;
}

/** True when `source` cannot stop `check`: on a cancel, a Single's Dynamic Link or a field of an ignored DocType. */
function cannotStop(source: LinkSource, check: LinkCheck): boolean {
  if (check.kind === 'delete') return false;
  // A Single is never submitted: on a cancel only its Links count (Frappe checks their value whatever the docstatus).
  if (source.holder === 'single') return source.doctypeField !== undefined;
  return check.ignored.has(source.doctype);
}

/** The first document, by `sources` in order, that links to `name` of `doctype`; undefined when none does. */
export async function findLinkingDocument(
  trx: Knex,
  sources: readonly LinkSource[],
  doctype: string,
  name: string,
  check: LinkCheck = { kind: 'delete' },
): Promise<LinkingDocument | undefined> {
  for (const source of sources) {
    if (cannotStop(source, check)) continue;
    const found =
      source.holder === 'single'
        ? await linkingSingle(trx, source, doctype, name)
        : await linkingRow(trx, source, doctype, name, check);
    if (found) return found;
  }
  return undefined;
}
