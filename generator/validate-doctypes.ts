// Validate phase: checks loaded DocTypes against the JSON Schema and Frappe's cross-file rules, all problems at once.
import Ajv, { type ErrorObject } from 'ajv';
import schema from './doctype.schema.json';
import type { LoadedDocType } from './load-doctypes';
import { className, moduleIdentifier, scrub } from './naming';
import type { Problem } from './problems';
import { FIELD_TYPES, FIELD_TYPE_INFO, isFieldType, type ValueKind } from '../runtime/meta/field-types';

/** The DocType JSON Schema with `definitions.fieldType.enum` filled in from FIELD_TYPES. */
export const docTypeSchema: typeof schema = (() => {
  const copy = structuredClone(schema);
  (copy.definitions.fieldType as { enum?: string[] }).enum = [...FIELD_TYPES];
  return copy;
})();

const checkSchema = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true }).compile(docTypeSchema);

/** Columns every table has (`doctype` is no column but a reserved document key). */
const STANDARD_COLUMNS: ReadonlySet<string> = new Set([
  'name',
  'owner',
  'creation',
  'modified',
  'modified_by',
  'docstatus',
  'idx',
  'doctype',
]);
/** Columns only child tables (`istable`) have. */
const CHILD_COLUMNS: ReadonlySet<string> = new Set(['parent', 'parentfield', 'parenttype']);
/**
 * The longest identifier every backend keeps whole, in bytes: PostgreSQL cuts longer ones to 63 (MariaDB refuses past
 * 64), so a longer fieldname or table name would name another column or table there.
 */
const MAX_IDENTIFIER_BYTES = 63;

/** Standard columns a DocType may redeclare as a field of the same value kind (Frappe's Web Page and Desktop Icon declare `idx` as Int). */
const REDECLARABLE: Readonly<Record<string, ValueKind>> = { idx: 'integer' };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const truthy = (v: unknown): boolean => v === 1 || v === true;
const show = (v: unknown): string => {
  if (isObject(v)) return 'an object';
  if (Array.isArray(v)) return 'an array';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

/** Levenshtein distance, for "did you mean" hints. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

function unknownFieldType(value: unknown): string {
  if (typeof value !== 'string') return `unknown field type ${show(value)}`;
  const scored = FIELD_TYPES.map((t) => ({ t, d: distance(t.toLowerCase(), value.toLowerCase()) }));
  const best = scored.reduce((a, b) => (b.d < a.d ? b : a));
  const near = best.d <= Math.max(1, Math.floor(value.length / 3)) ? best.t : undefined;
  return `unknown field type ${show(value)}${near ? ` (did you mean "${near}"?)` : ''}`;
}

/** Turns one ajv error into a sentence; undefined for ajv's summary errors (`if`). */
function describe(err: ErrorObject): string | undefined {
  const params = err.params as Record<string, unknown>;
  const description = (err.parentSchema as { description?: unknown } | undefined)?.description;
  switch (err.keyword) {
    case 'if':
      return undefined;
    case 'required':
      return params.missingProperty === 'fieldname' && err.schemaPath.includes('/else/')
        ? 'missing required property "fieldname" (only layout fields may omit it)'
        : `missing required property "${String(params.missingProperty)}"`;
    case 'type':
      return `must be ${String(params.type).split(',').join(' or ')}, got ${show(err.data)}`;
    case 'const':
      return `must be ${show(params.allowedValue)}, got ${show(err.data)}`;
    case 'enum':
      if (err.schemaPath.startsWith('#/definitions/fieldType/')) return unknownFieldType(err.data);
      if (typeof description === 'string') return `${description}, got ${show(err.data)}`;
      return `must be one of ${(params.allowedValues as unknown[]).map(show).join(', ')}, got ${show(err.data)}`;
    default:
      return `${typeof description === 'string' ? description : (err.message ?? err.keyword)}, got ${show(err.data)}`;
  }
}

function schemaProblems(doc: LoadedDocType): Problem[] {
  if (checkSchema(doc.json)) return [];
  return (checkSchema.errors ?? []).flatMap((err) => {
    const message = describe(err);
    return message === undefined
      ? []
      : [{ file: doc.file, pointer: err.instancePath, message, severity: 'error' as const }];
  });
}

/** Checks one DocType's own fields and settings; `byName` holds the first definition of every DocType in the set. */
function docProblems(doc: LoadedDocType, byName: ReadonlyMap<string, LoadedDocType>): Problem[] {
  const json = doc.json;
  if (!isObject(json)) return [];
  const out: Problem[] = [];
  const add = (pointer: string, message: string, severity: Problem['severity'] = 'error') =>
    out.push({ file: doc.file, pointer, message, severity });
  const fields = Array.isArray(json.fields) ? json.fields : [];
  const fieldnames = new Set(
    fields.flatMap((f) => (isObject(f) && typeof f.fieldname === 'string' ? [f.fieldname] : [])),
  );
  const istable = truthy(json.istable);
  // By lower-cased fieldname: SQLite's and MariaDB's column names ignore case, so `Qty` beside `qty` is one column.
  const firstAt = new Map<string, { at: number; fieldname: string }>();
  // (Past 61 characters the schema has said the name is too long.)
  if (
    typeof json.name === 'string' &&
    json.name.length <= 61 &&
    Buffer.byteLength(`tab${json.name}`) > MAX_IDENTIFIER_BYTES
  )
    add(
      '/name',
      `the table "tab${json.name}" is ${Buffer.byteLength(`tab${json.name}`)} bytes long: at most ${MAX_IDENTIFIER_BYTES} (PostgreSQL cuts longer table names), so the name may have ${MAX_IDENTIFIER_BYTES - 3} bytes`,
    );

  fields.forEach((field, i) => {
    if (!isObject(field)) return;
    const at = `/fields/${i}`;
    const { fieldname, fieldtype, options } = field;
    const label =
      typeof fieldname === 'string'
        ? `${String(fieldtype)} field "${fieldname}"`
        : `${String(fieldtype)} field`;
    if (typeof fieldname === 'string') {
      const lower = fieldname.toLowerCase();
      const first = firstAt.get(lower);
      if (first === undefined) firstAt.set(lower, { at: i, fieldname });
      else if (first.fieldname === fieldname)
        add(`${at}/fieldname`, `duplicate fieldname "${fieldname}" (first at /fields/${first.at})`);
      else
        add(
          `${at}/fieldname`,
          `fieldname "${fieldname}" differs from "${first.fieldname}" (at /fields/${first.at}) only in case: column names ignore case on SQLite and MariaDB`,
        );
      if (Buffer.byteLength(fieldname) > MAX_IDENTIFIER_BYTES)
        add(
          `${at}/fieldname`,
          `fieldname ${show(fieldname)} is ${Buffer.byteLength(fieldname)} characters long: at most ${MAX_IDENTIFIER_BYTES} (PostgreSQL cuts longer column names)`,
        );
      if (STANDARD_COLUMNS.has(fieldname) || (istable && CHILD_COLUMNS.has(fieldname))) {
        const kind = REDECLARABLE[fieldname];
        if (kind !== undefined && isFieldType(fieldtype) && FIELD_TYPE_INFO[fieldtype].value === kind) {
          add(
            `${at}/fieldname`,
            `fieldname "${fieldname}" redeclares the standard column "${fieldname}" as ${fieldtype}; the standard column is used`,
            'warning',
          );
        } else {
          add(`${at}/fieldname`, `fieldname "${fieldname}" clashes with the standard column "${fieldname}"`);
        }
      } else if (STANDARD_COLUMNS.has(lower) || (istable && CHILD_COLUMNS.has(lower))) {
        add(
          `${at}/fieldname`,
          `fieldname "${fieldname}" clashes with the standard column "${lower}": column names ignore case on SQLite and MariaDB`,
        );
      }
    }
    const blank =
      options === undefined || options === null || (typeof options === 'string' && options.trim() === '');
    const isTable = fieldtype === 'Table' || fieldtype === 'Table MultiSelect';
    if (fieldtype === 'Link' || isTable) {
      if (blank)
        add(options === undefined ? at : `${at}/options`, `${label} needs options naming the target DocType`);
      else if (typeof options === 'string') {
        const target = byName.get(options.trim());
        if (!target) {
          add(
            `${at}/options`,
            `${label} points to DocType "${options}", which is not in this set`,
            'warning',
          );
        } else if (isTable && !(isObject(target.json) && truthy(target.json.istable))) {
          add(
            `${at}/options`,
            `${label} points to DocType "${options}" (${target.file}), which is not a child table (istable)`,
          );
        }
      }
    } else if (fieldtype === 'Dynamic Link') {
      if (typeof options !== 'string' || options === fieldname || !fieldnames.has(options)) {
        add(
          options === undefined ? at : `${at}/options`,
          `${label} needs options naming another field of this DocType that holds the target DocType, got ${show(options)}`,
        );
      }
    } else if (fieldtype === 'Select' && options === null) {
      add(`${at}/options`, `${label} options must be a string (one choice per line), got null`);
    }
  });

  // fetch_from `link_field.field`: a Link (or Dynamic Link) field of this DocType, and a field of the DocType it links
  // to when that is in the set (a field renamed or removed there leaves it naming nothing).
  fields.forEach((field, i) => {
    if (!isObject(field) || typeof field.fetch_from !== 'string' || !field.fetch_from.trim()) return;
    const [link, target] = field.fetch_from.trim().split('.', 2) as [string, string | undefined];
    const linkField = fields.find((f) => isObject(f) && f.fieldname === link) as Json | undefined;
    const at = `/fields/${i}/fetch_from`;
    if (!linkField || (linkField.fieldtype !== 'Link' && linkField.fieldtype !== 'Dynamic Link') || !target) {
      add(
        at,
        `fetch_from "${field.fetch_from}" does not name a Link field of this DocType and a field of what it links to`,
        'warning',
      );
      return;
    }
    const linked =
      linkField.fieldtype === 'Link' && typeof linkField.options === 'string'
        ? byName.get(linkField.options.trim())
        : undefined;
    const linkedFields =
      linked && isObject(linked.json) && Array.isArray(linked.json.fields) ? linked.json.fields : [];
    if (
      linked &&
      !STANDARD_COLUMNS.has(target) &&
      !linkedFields.some((f) => isObject(f) && f.fieldname === target)
    )
      add(
        at,
        `fetch_from "${field.fetch_from}": ${String(linkField.options)} has no field "${target}"`,
        'warning',
      );
  });

  if (typeof json.autoname === 'string' && /^field:/i.test(json.autoname.trim())) {
    const target = json.autoname.trim().slice('field:'.length).trim();
    if (!fieldnames.has(target))
      add(
        '/autoname',
        `autoname "${json.autoname}" names field "${target}", which this DocType does not have`,
      );
  }
  for (const key of ['title_field', 'sort_field'] as const) {
    const value = json[key];
    if (
      typeof value === 'string' &&
      value !== '' &&
      !fieldnames.has(value) &&
      !STANDARD_COLUMNS.has(value) &&
      !CHILD_COLUMNS.has(value)
    ) {
      add(`/${key}`, `${key} "${value}" is not a field of this DocType`, 'warning');
    }
  }
  if (typeof json.search_fields === 'string')
    for (const name of json.search_fields.split(',').map((f) => f.trim()))
      if (name && name !== 'name' && !fieldnames.has(name))
        add(
          '/search_fields',
          `search_fields names "${name}", which is not a field of this DocType`,
          'warning',
        );
  if (istable && truthy(json.issingle))
    add('/issingle', 'a child table (istable) cannot also be a single (issingle)');
  return out;
}

/** Reports duplicate DocType names: an error within one doctypes root, a warning across roots (two apps). */
function duplicateNames(docs: LoadedDocType[]): { problems: Problem[]; byName: Map<string, LoadedDocType> } {
  const byName = new Map<string, LoadedDocType>();
  const problems: Problem[] = [];
  for (const doc of docs) {
    const name = isObject(doc.json) ? doc.json.name : undefined;
    if (typeof name !== 'string') continue;
    const first = byName.get(name);
    if (!first) byName.set(name, doc);
    else {
      const sameRoot = first.root === doc.root;
      problems.push({
        file: doc.file,
        pointer: '/name',
        message:
          `DocType "${name}" is defined twice: in ${first.file} and in ${doc.file}` +
          (sameRoot ? '' : ' (in different doctypes roots, e.g. two apps shipping the same DocType)'),
        severity: sameRoot ? 'error' : 'warning',
      });
    }
  }
  return { problems, byName };
}

/** Names generated code imports, which no DocType's class name may take. */
const IMPORTED_NAMES: Readonly<Record<string, string>> = {
  Model: 'objection',
  DocTypeMeta: 'doctype-service/internal',
  DocTypeRoutes: 'doctype-service/internal',
  BulkResult: 'doctype-service/internal',
};

/**
 * Reports DocTypes whose names differ but whose generated names do not (`Sales Order` and `Sales-Order` both
 * make models/sales_order.ts): an error, as one would silently overwrite the other's files.
 */
function generatedNameClashes(byName: ReadonlyMap<string, LoadedDocType>): Problem[] {
  const problems: Problem[] = [];
  const owners = new Map<string, string>();
  for (const [name, doc] of byName) {
    const generated: Array<[string, string]> = [
      ['file name', scrub(name)],
      ['module identifier', moduleIdentifier(name)],
      ['class name', className(name)],
    ];
    for (const [kind, value] of generated) {
      const first = owners.get(`${kind}:${value}`);
      const imported = kind === 'class name' ? IMPORTED_NAMES[value] : undefined;
      if (first !== undefined || imported !== undefined) {
        const other = imported
          ? `the name generated code imports from ${imported}`
          : `that of DocType "${first}"`;
        problems.push({
          file: doc.file,
          pointer: '/name',
          message: `DocType "${name}" generates the ${kind} "${value}", the same as ${other}`,
          severity: 'error',
        });
        break;
      }
      owners.set(`${kind}:${value}`, name);
    }
  }
  return problems;
}

/** Compares JSON pointers segment by segment, numeric segments as numbers. */
function comparePointers(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const x = as[i]!;
    const y = bs[i]!;
    if (x === y) continue;
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y);
    return numeric ? Number(x) - Number(y) : x < y ? -1 : 1;
  }
  return as.length - bs.length;
}

const byPlace = (a: Problem, b: Problem): number =>
  (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
  comparePointers(a.pointer, b.pointer) ||
  (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1) ||
  (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);

/** Validates all DocTypes together (schema, then per-DocType and cross-file rules); returns every problem, sorted by file then pointer. */
export function validateDocTypes(docs: LoadedDocType[]): Problem[] {
  const sorted = [...docs].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const { problems, byName } = duplicateNames(sorted);
  problems.push(...generatedNameClashes(byName));
  for (const doc of sorted) problems.push(...schemaProblems(doc), ...docProblems(doc, byName));
  return problems.sort(byPlace);
}
