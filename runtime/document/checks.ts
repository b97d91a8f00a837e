// Document checks run on every write: body shape (generated validators), defaults, values, mandatory, links, unique.
import {
  DataError,
  DuplicateEntryError,
  CancelledLinkError,
  LinkValidationError,
  MandatoryError,
  PermissionError,
} from '../errors/errors';
import { isTableType } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { BodyValidator, DocTypeBinding, Registry } from '../registry/registry';
import { fieldLists, tableFields } from '../registry/field-lists';
import type { DocData, LinkTarget, Queryable, RowStore } from '../db/row-store';
import { fetchColumns, fieldsToFetch, setFetchedValues } from './fetch-from';
import { normalizeValue } from './values';
import { resolveDefault } from '../db/field-defaults';

/** Runs a generated validator on a body (coercing and stripping it in place); throws DataError naming each bad field. */
export function checkBody(validator: BodyValidator, body: unknown, doctype: string): DocData {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new DataError(`The body must be a JSON object of ${doctype} fields`);
  if (!validator(body)) {
    const problems = (validator.errors ?? []).map((e) => {
      const where = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body';
      if (e.keyword === 'enum')
        return `${where}: must be one of ${((e.params?.allowedValues as unknown[]) ?? [])
          .filter((v) => v !== null)
          .map((v) => JSON.stringify(v))
          .join(', ')}`;
      return `${where}: ${e.message ?? 'is invalid'}`;
    });
    throw new DataError([...new Set(problems)].join('; '));
  }
  return body as DocData;
}

/** Fills missing fields of a new document (and of its child rows) with their defaults. */
export function applyDefaults(meta: DocTypeMeta, data: DocData, user: string): void {
  for (const found of fieldLists(meta).defaults) {
    const current = data[found.field.fieldname];
    // A table sent as null is refused later (not a list of rows), not replaced.
    if (current === undefined || (current === null && found.kind !== 'rows'))
      data[found.field.fieldname] = resolveDefault(found, user);
  }
}

/** Gives every stored field that has no value the one its column holds (Frappe's get_valid_dict): 0 for numbers and Check, else null. */
export function fillStoredValues(meta: DocTypeMeta, data: DocData): void {
  const { stored, storedEmpty } = fieldLists(meta);
  for (let i = 0; i < stored.length; i++) {
    const name = (stored[i] as FieldMeta).fieldname;
    if (data[name] === undefined) data[name] = storedEmpty[i];
  }
}

/** Normalizes every value in place (calendar-valid dates, storage forms); throws DataError naming the field. */
export function normalizeValues(meta: DocTypeMeta, data: DocData): void {
  for (const field of fieldLists(meta).stored) {
    if (field.fieldname in data) data[field.fieldname] = normalizeValue(field, data[field.fieldname]);
  }
}

const isEmpty = (value: unknown) =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && value.trim() === '') ||
  (Array.isArray(value) && value.length === 0);

/** Checks mandatory fields of the document and its child rows; one MandatoryError naming every missing field. */
export function checkMandatory(binding: DocTypeBinding, registry: Registry, data: DocData): void {
  const missing: string[] = [];
  const messages: string[] = [];
  // In field order: a table's rows are reported right after the table itself.
  for (const field of fieldLists(binding.meta).mandatoryOrTables) {
    if (field.reqd && isEmpty(data[field.fieldname])) {
      missing.push(field.fieldname);
      messages.push(
        isTableType(field.fieldtype)
          ? `Data missing in table ${field.label}`
          : `Value missing for ${binding.meta.name}: ${field.label}`,
      );
    }
    const child = isTableType(field.fieldtype) && field.options ? registry.get(field.options) : undefined;
    if (!child) continue;
    for (const [i, row] of ((data[field.fieldname] as DocData[] | undefined) ?? []).entries()) {
      for (const cf of fieldLists(child.meta).mandatoryOrTables) {
        if (cf.reqd && isEmpty(row[cf.fieldname])) {
          missing.push(`${field.fieldname}[${i}].${cf.fieldname}`);
          messages.push(`${field.label} Row #${i + 1}: Value missing for: ${cf.label}`);
        }
      }
    }
  }
  if (missing.length)
    throw new MandatoryError(
      `[${binding.meta.name}, ${String(data.name ?? 'new')}]: ${missing.join(', ')}. ${messages.join('. ')}`,
    );
}

/**
 * The document `value` links to: its name as stored (MariaDB finds `acme` as `Acme`), its docstatus and the `columns`
 * fetch_from needs, in the one read (locked in a server database's transaction) the Link check makes; undefined when
 * none.
 */
async function linkedDoc(
  rows: RowStore,
  q: Queryable,
  binding: DocTypeBinding,
  value: string,
  columns: readonly string[],
): Promise<LinkTarget | undefined> {
  if (!binding.meta.issingle) return rows.linkTarget(q, binding, value, columns);
  if (value !== binding.meta.name) return undefined;
  // A Single's values are rows of tabSingles: read only when a field fetches from it.
  const values = columns.length ? await rows.load(q, binding, value) : undefined;
  return { name: value, docstatus: 0, ...(values ? { values } : {}) };
}

/** The User Permissions of the writing user, as the Link check needs them (runtime/permissions/user-permissions.ts). */
export interface LinkRestriction {
  /** The values of `allow` the user is restricted to when writing `doctype`; undefined: not restricted. */
  allowed(allow: string, doctype: string): ReadonlySet<string> | undefined;
}

/** The empty list of fields to fetch and columns to read. */
const NOTHING: readonly never[] = [];

/** What the Link check of one save works with, for the document and each of its child rows. */
interface LinkScope {
  rows: RowStore;
  q: Queryable;
  registry: Registry;
  /** The DocType being saved (User Permissions are per DocType written). */
  doctype: string;
  restriction: LinkRestriction | undefined;
  /** A submittable document (its child rows too) may not link to a cancelled one, as Frappe's _validate_links. */
  submittable: boolean;
}

/**
 * Checks the Links of `data` (the document or one child row, `where` naming it in messages) and fetches the fields
 * whose fetch_from goes through them; `submitted`: `data` was stored and is submitted, so only allow_on_submit fields
 * are fetched.
 */
async function checkLinksOf(
  scope: LinkScope,
  meta: DocTypeMeta,
  data: DocData,
  where: string,
  submitted: boolean,
): Promise<void> {
  const { registry, restriction } = scope;
  const { links, fetches } = fieldLists(meta);
  for (const field of links) {
    const value = data[field.fieldname];
    if (value === undefined || value === null || value === '') continue;
    let target: string | undefined;
    if (field.fieldtype === 'Link') target = field.options;
    else if (field.options) target = String(data[field.options] ?? '');
    else continue;
    if (!target) throw new LinkValidationError(`${where}${field.label}: the DocType to link to is not set`);
    // Links to "DocType" name a DocType of this service, not a stored row.
    if (target === 'DocType') {
      if (!registry.get(String(value)))
        throw new LinkValidationError(`Could not find ${where}${field.label}: ${String(value)}`);
      continue;
    }
    const binding = registry.get(target);
    if (!binding) continue;
    // Outside the user's User Permissions: refused before the lookup, so the answer never tells whether it exists.
    const allowed =
      field.fieldtype === 'Link' && !field.ignoreUserPermissions
        ? restriction?.allowed(target, scope.doctype)
        : undefined;
    if (allowed && !allowed.has(String(value)))
      throw new PermissionError(
        `${where}${field.label}: not allowed for ${target} ${String(value).slice(0, 140)}`,
      );
    // Most DocTypes fetch nothing: no list is made for them.
    const fetched = fetches.size ? fetches.get(field.fieldname) : undefined;
    const fetching = fetched ? fieldsToFetch(fetched, data, submitted) : NOTHING;
    const columns = fetching.length ? fetchColumns(binding, fetching) : NOTHING;
    const linked = await linkedDoc(scope.rows, scope.q, binding, String(value), columns);
    if (linked === undefined)
      throw new LinkValidationError(`Could not find ${where}${field.label}: ${String(value)}`);
    // As Frappe: the link holds the target's name as stored, whatever case the database matched it in.
    if (linked.name !== value) data[field.fieldname] = linked.name;
    // A submittable document may not link to a cancelled one of a submittable DocType (Frappe's cancelled_links); an
    // amendment names the cancelled document it amends.
    if (
      scope.submittable &&
      field.fieldname !== 'amended_from' &&
      linked.docstatus === 2 &&
      binding.meta.isSubmittable
    )
      throw new CancelledLinkError(`Cannot link cancelled document: ${where}${field.label}: ${linked.name}`);
    if (fetching.length) setFetchedValues(data, fetching, binding, linked.values ?? { ...linked }, where);
  }
}

/** Where a save's Link check starts from: the writer's User Permissions and the document as stored. */
export interface LinkCheckOptions {
  /** The writer's restriction on Link values (User Permissions); none when not given. */
  restriction?: LinkRestriction | undefined;
  /** The document as stored before this save; undefined for an insert. */
  stored?: DocData | undefined;
}

/**
 * Checks every Link and Dynamic Link value of the document and its child rows points at an existing document (for a
 * submittable document, not a cancelled one of a submittable DocType), and (with `restriction`) that every Link value
 * lies inside the writing user's User Permissions (403 otherwise). With the same read, sets the fields whose
 * fetch_from goes through each Link to the linked document's value (fetch-from.ts).
 */
export async function checkLinks(
  rows: RowStore,
  q: Queryable,
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
  options: LinkCheckOptions = {},
): Promise<void> {
  const scope: LinkScope = {
    rows,
    q,
    registry,
    doctype: binding.meta.name,
    restriction: options.restriction,
    submittable: binding.meta.isSubmittable,
  };
  const { stored } = options;
  // Frappe fetches into a submitted document only what is allow_on_submit, but for what is new (a child row added).
  const submitted = stored !== undefined && Number(data.docstatus) === 1;
  await checkLinksOf(scope, binding.meta, data, '', submitted);
  for (const { field, child } of tableFields(binding.meta, registry)) {
    const rowsOf = (data[field.fieldname] as DocData[] | undefined) ?? [];
    const storedRows =
      submitted && fieldLists(child.meta).fetches.size
        ? new Set(((stored[field.fieldname] as DocData[] | undefined) ?? []).map((r) => String(r.name)))
        : undefined;
    for (const [i, row] of rowsOf.entries()) {
      const rowSubmitted = storedRows?.has(String(row.name)) ?? submitted;
      await checkLinksOf(scope, child.meta, row, `${field.label} Row #${i + 1}: `, rowSubmitted);
    }
  }
}

/**
 * Checks unique fields against other documents of the DocType (409 DuplicateEntryError naming the field). An unset
 * field is checked with what its column will hold (an Int: 0, which the unique index counts as a value, as Frappe's).
 */
export async function checkUnique(
  rows: RowStore,
  q: Queryable,
  binding: DocTypeBinding,
  data: DocData,
): Promise<void> {
  if (binding.meta.issingle) return;
  const { unique, uniqueEmpty } = fieldLists(binding.meta);
  for (let i = 0; i < unique.length; i++) {
    const field = unique[i] as FieldMeta;
    const value = data[field.fieldname] === undefined ? uniqueEmpty[i] : data[field.fieldname];
    if (value === undefined || value === null || value === '') continue;
    if (await rows.takenByOther(q, binding, field.fieldname, value, String(data.name)))
      throw new DuplicateEntryError(`${field.label} must be unique: ${String(value)} is already used`, {
        title: 'Duplicate Entry',
      });
  }
}
