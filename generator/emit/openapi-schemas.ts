// The component schemas of the OpenAPI documents: per DocType a read schema (what the server answers), create and
// update schemas (what it takes), and a list-row schema; plus the shared ones (errors, filters, bulk results, jobs).
import { isTableType } from '../../runtime/meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../../runtime/meta/types';
import { docTypeKind } from '../../runtime/routes/route-table';
import type { GeneratorContext } from '../context';
import { bodyFields, fieldSchema, requiredFields, type JsonSchema } from '../json-schema';
import { className } from '../naming';

/** A `$ref` to a component schema. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/**
 * The component names of a DocType's schemas: the class name, and `_Create`, `_Update`, `_Row` after it (class names
 * never hold `_`, so DocType "Project Update" and Project's update schema cannot meet).
 */
export const schemaNames = (doctype: string) => {
  const base = className(doctype);
  return { read: base, create: `${base}_Create`, update: `${base}_Update`, row: `${base}_Row` };
};

const TIMESTAMP = 'YYYY-MM-DD HH:MM:SS[.ffffff]';

/** Standard fields as the server answers them; server-set ones are readOnly (`modified` is sent back on updates). */
const STANDARD_READ: Record<string, JsonSchema> = {
  name: { type: 'string' },
  owner: { type: 'string', readOnly: true },
  creation: { type: 'string', readOnly: true, description: TIMESTAMP },
  modified: {
    type: 'string',
    description: `${TIMESTAMP}; send it back on an update to refuse a stale write (409)`,
  },
  modified_by: { type: 'string', readOnly: true },
  docstatus: { type: 'integer', enum: [0, 1, 2], readOnly: true },
  idx: { type: 'integer', readOnly: true },
};

const CHILD_READ: Record<string, JsonSchema> = {
  parent: { type: 'string', readOnly: true },
  parentfield: { type: 'string', readOnly: true },
  parenttype: { type: 'string', readOnly: true },
};

const isLink = (f: FieldMeta) => f.fieldtype === 'Link' || f.fieldtype === 'Dynamic Link';

/** A Link value as answered: the name, or the linked document when the request asked `expand` / `expand_links`. */
function linkRead(schema: JsonSchema): JsonSchema {
  const { description, ...value } = schema;
  return {
    description,
    anyOf: [
      value,
      {
        type: 'object',
        description: 'the linked document (only with expand / expand_links)',
        additionalProperties: true,
      },
    ],
  };
}

/** Options of the DocType schemas: the typed client types Link values as names (it never asks for expansion). */
export interface SchemaOptions {
  expandableLinks: boolean;
}

/** The fields of a DocType's read schema: standard ones, then its own (Password fields are never answered). */
function readProperties(
  meta: DocTypeMeta,
  ctx: GeneratorContext,
  options: SchemaOptions,
): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {
    doctype: { type: 'string', const: meta.name },
    ...STANDARD_READ,
    ...(meta.istable ? CHILD_READ : {}),
  };
  for (const f of bodyFields(meta)) {
    if (f.fieldtype === 'Password') continue;
    const schema = fieldSchema(f, ctx, (child) => ref(schemaNames(child.name).read));
    properties[f.fieldname] = isLink(f) && options.expandableLinks ? linkRead(schema) : schema;
  }
  return properties;
}

/** The read schema: a document as GET, create and update answer it (v1 leaves null fields out, v2 keeps them). */
function readSchema(meta: DocTypeMeta, ctx: GeneratorContext, options: SchemaOptions): JsonSchema {
  return {
    type: 'object',
    description: `A ${meta.name} document as the server answers it (v1 leaves out null fields; v2 keeps them).`,
    properties: readProperties(meta, ctx, options),
    required: ['doctype', 'name'],
  };
}

/** Body fields of a create or update: child tables take the child's create or update rows; Passwords are writeOnly. */
function inputProperties(
  meta: DocTypeMeta,
  ctx: GeneratorContext,
  which: 'create' | 'update',
): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {
    name: {
      type: ['string', 'null'],
      maxLength: 140,
      description: meta.istable
        ? 'an existing row to keep (a row without a name is new)'
        : 'the name, where the naming rule lets the client choose it',
    },
  };
  if (meta.istable) properties.idx = { type: ['integer', 'null'] };
  else {
    if (which === 'update')
      properties.modified = {
        type: 'string',
        description:
          'the modified value last read: a newer stored one refuses the update (409 TimestampMismatchError)',
      };
    properties.docstatus = { type: 'integer', enum: [0, 1, 2], description: '1 submits, 2 cancels' };
  }
  for (const f of bodyFields(meta)) {
    const schema = fieldSchema(f, ctx, (child) => ref(schemaNames(child.name)[which]));
    properties[f.fieldname] = f.fieldtype === 'Password' ? { ...schema, writeOnly: true } : schema;
  }
  return properties;
}

/** A list row: the fields asked for (default `name`), aliases and aggregates, so every key is optional and more are allowed. */
function rowSchema(meta: DocTypeMeta, ctx: GeneratorContext, options: SchemaOptions): JsonSchema {
  const properties = readProperties(meta, ctx, options);
  for (const f of meta.fields) if (isTableType(f.fieldtype)) delete properties[f.fieldname];
  return {
    type: 'object',
    description: `A row of a ${meta.name} list: the fields asked for (default: name), their aliases, aggregates and child fields.`,
    properties,
    additionalProperties: true,
  };
}

/** The component schemas of one DocType, keyed by name: which exist depends on what its kind answers. */
export function docTypeSchemas(
  meta: DocTypeMeta,
  ctx: GeneratorContext,
  options: SchemaOptions = { expandableLinks: true },
): Record<string, JsonSchema> {
  const names = schemaNames(meta.name);
  const kind = docTypeKind(meta);
  const out: Record<string, JsonSchema> = { [names.read]: readSchema(meta, ctx, options) };
  if (kind === 'document' || meta.istable) {
    const required = requiredFields(meta);
    out[names.create] = {
      type: 'object',
      description: `The body of a new ${meta.name}${meta.istable ? ' row' : ''} (unknown keys are dropped).`,
      properties: inputProperties(meta, ctx, 'create'),
      ...(required.length ? { required } : {}),
    };
  }
  if (kind !== 'child' || meta.istable)
    out[names.update] = {
      type: 'object',
      description: `Changes to a ${meta.name}${meta.istable ? ' row' : ''}: every key is optional (unknown keys are dropped); a table replaces the stored rows.`,
      properties: inputProperties(meta, ctx, 'update'),
    };
  if (kind === 'document') out[names.row] = rowSchema(meta, ctx, options);
  return out;
}

/** An error body (CONTRACT 6): Frappe's keys; v2 adds `errors`. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'An error: exc_type names the class (docs/errors.md); v2 adds errors.',
  required: ['exc_type', 'exception', '_server_messages'],
  properties: {
    exc_type: { type: 'string', description: 'the error class, e.g. ValidationError, DuplicateEntryError' },
    exception: { type: 'string', description: '"<exc_type>: <message>"' },
    _server_messages: {
      type: 'string',
      description: 'JSON-encoded list of JSON-encoded {message, title?, indicator?}',
    },
    exc: { type: 'string', description: 'JSON-encoded traceback list (developer_mode only)' },
    errors: {
      type: 'array',
      description: 'v2 only',
      items: {
        type: 'object',
        required: ['type', 'message'],
        properties: { type: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** `filters` / `or_filters`: an object of field → value or [operator, value], or a list of conditions. */
export const FILTERS_SCHEMA: JsonSchema = {
  description:
    'Frappe filters: {"field": value} or {"field": [operator, value]}, or a list of [field, operator, value] / [DocType, field, operator, value] (docs/queries.md).',
  anyOf: [
    { type: 'object', additionalProperties: true },
    {
      type: 'array',
      items: { type: 'array', minItems: 2, maxItems: 4, items: {} },
    },
  ],
};

const nameValue = { anyOf: [{ type: 'string' }, { type: 'integer' }] };

/** The bulk result object (SPEC 2.5): the success list is `updated`, `deleted` or `inserted`; the counts add up. */
export const BULK_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'Per-item outcome of a bulk operation. A malformed or refused item is listed in `failed`; success_count + failure_count = total.',
  required: ['failed', 'total', 'success_count', 'failure_count'],
  properties: {
    updated: {
      type: 'array',
      items: {},
      description: 'bulk update: names (across DocTypes: {doctype, name})',
    },
    deleted: {
      type: 'array',
      items: {},
      description: 'bulk delete: names (across DocTypes: {doctype, name})',
    },
    inserted: { type: 'array', items: { type: 'string' }, description: 'bulk insert: names' },
    failed: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: ['string', 'integer', 'null'] },
          doctype: { type: ['string', 'null'] },
          error: { type: 'string', description: 'exc_type of the error' },
          message: { type: 'string' },
        },
      },
    },
    total: { type: 'integer' },
    success_count: { type: 'integer' },
    failure_count: { type: 'integer' },
  },
};

/** A background job (CONTRACT 6): `result` is the bulk result object once the job has finished. */
export const JOB_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['job_id', 'status', 'progress'],
  properties: {
    job_id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'running', 'finished', 'failed'] },
    progress: {
      type: 'object',
      properties: { done: { type: 'integer' }, total: { type: 'integer' } },
    },
    result: { anyOf: [ref('BulkResult'), { type: 'null' }] },
    error: { type: ['string', 'null'], description: '`exc_type: message` of a failed job' },
  },
};

/** A bulk request's items: updates (`name` + fields), new documents, cross-DocType items, or names. */
export function bulkItems(operation: string, doctype: string | undefined): JsonSchema {
  if (operation === 'bulkDelete') return nameValue;
  if (operation === 'bulkInsert' && doctype) return ref(schemaNames(doctype).create);
  if (operation === 'bulkUpdate' && doctype)
    return {
      allOf: [
        ref(schemaNames(doctype).update),
        { type: 'object', required: ['name'], properties: { name: nameValue } },
      ],
    };
  return {
    type: 'object',
    required: ['doctype', 'name'],
    properties: { doctype: { type: 'string' }, name: nameValue },
    additionalProperties: true,
  };
}
