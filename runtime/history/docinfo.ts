// get_docinfo: what Frappe's form shows beside a document, here its versions (newest first), for anyone who may read
// the document. A reader sees no value of a field above their read levels: such changes leave `changed`, rows and
// row changes lose those fields, a table above their levels goes whole, and a version left with nothing goes too. A
// field taken out of the DocType since is left out for every reader.
import type { Caller } from '../document/caller';
import { decodeRow } from '../db/document-rows';
import type { DocData } from '../db/row-store';
import { isTableType } from '../meta/field-types';
import { CHILD_FIELDS, STANDARD_FIELDS, type DocTypeMeta } from '../meta/types';
import { getDocument } from '../operations/document-operations';
import { readsLevel, rightsFor, type DocTypeRights } from '../permissions/doctype-rights';
import type { DocTypeBinding } from '../registry/registry';
import { bindingFor } from '../operations/doctype-binding';
import { VERSION, historyBinding } from './history-rows';
import type { ChangedValue, VersionDiff } from './version-diff';

/** One version as get_docinfo lists it (Frappe's fields; `data` is the diff as JSON text). */
export interface DocinfoVersion {
  name: string;
  owner: string;
  creation: string;
  data: string;
}

/** What get_docinfo answers. */
export interface Docinfo {
  versions: DocinfoVersion[];
}

/** Standard columns a diff may name (docstatus, idx): readable by whoever reads the document. */
const STANDARD = new Set<string>([...STANDARD_FIELDS, ...CHILD_FIELDS]);

/**
 * Reads the fields of one DocType for a reader: a standard column is readable; a field the DocType no longer has (taken
 * out since the version was written) is not, for anyone, as no other answer holds it.
 */
function fieldReader(meta: DocTypeMeta, rights: DocTypeRights): (fieldname: string) => boolean {
  const fields = new Map(meta.fields.map((f) => [f.fieldname, f]));
  return (fieldname) => {
    const field = fields.get(fieldname);
    if (!field) return STANDARD.has(fieldname);
    return rights.all || (field.fieldtype !== 'Password' && readsLevel(rights, field.permlevel));
  };
}

/** The diff without what the reader may not read; undefined when nothing is left. */
function maskDiff(caller: Caller, binding: DocTypeBinding, diff: VersionDiff): VersionDiff | undefined {
  const rights = rightsFor(caller.user, binding.meta);
  const readable = fieldReader(binding.meta, rights);
  const childReaders = new Map<string, (fieldname: string) => boolean>();
  for (const field of binding.meta.fields) {
    if (!isTableType(field.fieldtype) || !field.options || !readable(field.fieldname)) continue;
    const child = caller.site.registry.get(field.options);
    if (child) childReaders.set(field.fieldname, fieldReader(child.meta, rights));
  }
  const changes = (reader: (f: string) => boolean, list: ChangedValue[]) => list.filter(([f]) => reader(f));
  const row = (reader: (f: string) => boolean, data: DocData) =>
    Object.fromEntries(Object.entries(data).filter(([f]) => reader(f)));
  const masked: VersionDiff = {
    changed: changes(readable, diff.changed ?? []),
    added: [],
    removed: [],
    row_changed: [],
  };
  for (const key of ['added', 'removed'] as const)
    for (const [table, data] of diff[key] ?? []) {
      const reader = childReaders.get(table);
      if (reader) masked[key].push([table, row(reader, data)]);
    }
  for (const [table, idx, name, list] of diff.row_changed ?? []) {
    const reader = childReaders.get(table);
    const left = reader ? changes(reader, list) : [];
    if (left.length) masked.row_changed.push([table, idx, name, left]);
  }
  const empty =
    !masked.changed.length && !masked.added.length && !masked.removed.length && !masked.row_changed.length;
  return empty ? undefined : masked;
}

/** The versions of `doctype`/`name` for `caller`, who must be able to read the document (else 403/404 as a GET). */
export async function getDocinfo(caller: Caller, doctype: string, name: string): Promise<Docinfo> {
  await getDocument(caller, doctype, name);
  const binding = bindingFor(caller, doctype, 'get');
  const version = historyBinding(caller, VERSION);
  const rows = (await caller.site.db
    .knex(version.meta.tableName)
    .select('name', 'owner', 'creation', 'data')
    .where({ ref_doctype: binding.meta.name, docname: name })
    .orderBy([
      { column: 'creation', order: 'desc' },
      { column: 'name', order: 'desc' },
    ])) as Record<string, unknown>[];
  const versions: DocinfoVersion[] = [];
  for (const raw of rows) {
    const row = decodeRow(version.meta, raw);
    let diff: VersionDiff | undefined;
    try {
      diff = JSON.parse(String(row.data)) as VersionDiff;
    } catch {
      continue;
    }
    const shown = maskDiff(caller, binding, diff);
    if (shown)
      versions.push({
        name: String(row.name),
        owner: String(row.owner),
        creation: String(row.creation),
        data: JSON.stringify(shown),
      });
  }
  return { versions };
}
