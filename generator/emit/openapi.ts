// Emits generated/openapi/v1.json and v2.json: OpenAPI 3.1 documents built from the same IR as the routes.
import type { DocTypeMeta } from '../../runtime/meta/types';
import type { GeneratorContext } from '../context';
import { bodyFields, fieldSchema, requiredFields, type JsonSchema } from '../json-schema';
import { className } from '../naming';
import type { DocTypeIR } from '../normalize';
import { BUILTIN_METHOD_DOCS } from '../methods/builtin-methods';
import {
  ROUTE_TABLE,
  docTypeKind,
  docTypeRows,
  type Operation,
  type RouteRow,
  type Verb,
} from '../../runtime/routes/route-table';
import { docTypePath } from './routes';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonSchema) => ({ description, content: json(schema) });

const STANDARD: Record<string, JsonSchema> = {
  name: { type: 'string' },
  owner: { type: 'string' },
  creation: { type: 'string', description: 'YYYY-MM-DD HH:MM:SS[.ffffff]' },
  modified: { type: 'string', description: 'YYYY-MM-DD HH:MM:SS[.ffffff]' },
  modified_by: { type: 'string' },
  docstatus: { type: 'integer', enum: [0, 1, 2] },
  idx: { type: 'integer' },
};

function documentSchema(meta: DocTypeMeta, ctx: GeneratorContext): JsonSchema {
  const child = (target: DocTypeMeta) => ref(className(target.name));
  const properties: Record<string, JsonSchema> = {
    doctype: { type: 'string', const: meta.name },
    ...STANDARD,
  };
  if (meta.istable)
    Object.assign(properties, {
      parent: { type: 'string' },
      parentfield: { type: 'string' },
      parenttype: { type: 'string' },
    });
  for (const f of bodyFields(meta)) properties[f.fieldname] = fieldSchema(f, ctx, child);
  const required = requiredFields(meta);
  return {
    type: 'object',
    description: `A ${meta.name} document.`,
    properties,
    ...(required.length ? { required } : {}),
  };
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['exc_type'],
  properties: {
    exc_type: { type: 'string' },
    exception: { type: 'string' },
    _server_messages: {
      type: 'string',
      description: 'JSON-encoded list of JSON-encoded {message, title?, indicator?}',
    },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const nameValue = { oneOf: [{ type: 'string' }, { type: 'integer' }] };

/** The bulk result object (SPEC 2.5): the success list is `updated`, `deleted` or `inserted`; the counts add up. */
const BULK_RESULT_SCHEMA: JsonSchema = {
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
          name: { type: ['string', 'null'] },
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
const JOB_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['job_id', 'status', 'progress'],
  properties: {
    job_id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['queued', 'running', 'finished', 'failed'] },
    progress: {
      type: 'object',
      properties: { done: { type: 'integer' }, total: { type: 'integer' } },
    },
    result: { oneOf: [{ $ref: '#/components/schemas/BulkResult' }, { type: 'null' }] },
    error: { type: ['string', 'null'], description: '`exc_type: message` of a failed job' },
  },
};

/** The request body of a bulk row: `docs` (items per the operation) or `names`. */
function bulkRequest(row: RouteRow, doc: JsonSchema | undefined): JsonSchema {
  if (row.request === 'bulk-names')
    return {
      type: 'object',
      required: ['names'],
      properties: { names: { type: 'array', items: nameValue } },
    };
  const item: JsonSchema =
    row.operation === 'bulkInsert'
      ? (doc ?? {})
      : row.operation === 'bulkUpdate'
        ? { allOf: [doc ?? {}, { type: 'object', required: ['name'], properties: { name: nameValue } }] }
        : {
            type: 'object',
            required: ['doctype', 'name'],
            properties: { doctype: { type: 'string' }, name: nameValue },
            additionalProperties: true,
          };
  return { type: 'object', required: ['docs'], properties: { docs: { type: 'array', items: item } } };
}

const errors = {
  '400': { description: 'Invalid request', content: json(ref('Error')) },
  '401': { description: 'Authentication required', content: json(ref('Error')) },
  '403': { description: 'Not permitted', content: json(ref('Error')) },
  '404': { description: 'Not found', content: json(ref('Error')) },
};

const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
const jsonParam = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string' },
});
const intParam = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'integer', minimum: 0 },
});

const listParams: Record<1 | 2, JsonSchema[]> = {
  1: [
    jsonParam('fields', 'JSON array of fields'),
    jsonParam('filters', 'JSON filters'),
    jsonParam('order_by', 'field [asc|desc]'),
    intParam('limit_start', 'offset'),
    intParam('limit_page_length', 'page size (0 = up to max_page_length)'),
  ],
  2: [
    jsonParam('fields', 'JSON array of fields'),
    jsonParam('filters', 'JSON object of filters'),
    jsonParam('order_by', 'field [asc|desc]'),
    jsonParam('group_by', 'field'),
    intParam('start', 'offset'),
    intParam('limit', 'page size'),
  ],
};

/** The success body of a DocType row: the row's response shape in its envelope. */
function responseSchema(row: RouteRow, doc: JsonSchema, version: 1 | 2): JsonSchema {
  const wrap = (schema: JsonSchema, more: Record<string, JsonSchema> = {}) => ({
    type: 'object',
    properties: { data: schema, ...more },
  });
  switch (row.response) {
    case 'document':
      return wrap(doc);
    case 'documents':
      return wrap({ type: 'array', items: doc }, version === 2 ? { has_next_page: { type: 'boolean' } } : {});
    case 'count':
      return wrap({ type: 'integer' });
    case 'meta':
      return wrap({ type: 'object' });
    case 'ok':
      return wrap({ const: 'ok' });
    case 'bulk-result':
      return wrap(
        ref('BulkResult'),
        row.operation === 'bulkUpdate' || row.operation === 'bulkUpdateAcross'
          ? { docs: { type: 'array', items: doc, description: 'name, the changed fields and modified' } }
          : {},
      );
    case 'job':
      return wrap(ref('Job'));
    case 'method-result':
    case 'openapi':
      return { type: 'object' };
    case 'file':
      return { type: 'string', contentMediaType: 'application/octet-stream' };
  }
}

const SUMMARY: Partial<Record<Operation, [verb: string, description: string]>> = {
  list: ['List', 'Rows'],
  create: ['Create', 'Created'],
  get: ['Get', 'Document'],
  update: ['Update', 'Saved'],
  delete: ['Delete', 'Deleted'],
  copy: ['Copy', 'A clean document that can be posted as new'],
  count: ['Count', 'Count'],
  meta: ['Metadata of', 'Metadata'],
  bulkUpdate: ['Bulk update', 'Bulk result (each item in its own transaction)'],
  bulkDelete: ['Bulk delete', 'Bulk result (each item in its own transaction)'],
  bulkInsert: ['Bulk insert', 'Bulk result (each item in its own transaction)'],
};

/** The OpenAPI operations of one DocType row (document methods are `documentMethodPaths`'). */
function docTypeOperations(row: RouteRow, ir: DocTypeIR, version: 1 | 2): JsonSchema {
  const dt = ir.meta.name;
  const doc = ref(className(dt));
  const [verb, description] = SUMMARY[row.operation] ?? [row.operation, 'Result'];
  const params: JsonSchema[] = row.path.includes('{name') && !ir.meta.issingle ? [nameParam] : [];
  if (row.request === 'list-query') params.push(...listParams[version]);
  if (row.request === 'count-query') params.push(jsonParam('filters', 'JSON object of filters'));
  if (row.request === 'copy-query')
    params.push({ name: 'ignore_no_copy', in: 'query', schema: { type: 'boolean', default: true } });
  const entry: JsonSchema = {};
  const verbs = row.verbs === '*' ? [] : row.verbs;
  for (const v of verbs) {
    const op = v === 'PATCH' ? 'patch' : row.operation;
    entry[v.toLowerCase()] = {
      tags: [dt],
      operationId: `v${version}_${op}_${ir.meta.slug}`,
      summary: `${verb} ${dt}`,
      ...(params.length ? { parameters: params } : {}),
      ...(row.request === 'document' ? { requestBody: { required: true, content: json(doc) } } : {}),
      ...(row.request === 'bulk-docs' || row.request === 'bulk-names'
        ? { requestBody: { required: true, content: json(bulkRequest(row, doc)) } }
        : {}),
      responses: {
        [String(row.status)]: ok(description, responseSchema(row, doc, version)),
        ...errors,
        ...(row.operation === 'create' && version === 1 ? { '409': errors['400'] } : {}),
      },
    };
  }
  return entry;
}

/** The paths of every DocType row of an API version that serves this DocType's kind. */
function docTypePaths(ir: DocTypeIR, version: 1 | 2, ctx: GeneratorContext): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const row of docTypeRows(docTypeKind(ir.meta), version)) {
    const found =
      row.operation === 'documentMethod'
        ? documentMethodPaths(row, version, ir, ctx)
        : { [docTypePath(row, ir)]: docTypeOperations(row, ir, version) };
    for (const [path, ops] of Object.entries(found)) paths[path] = { ...paths[path], ...ops };
  }
  return paths;
}

const verbErrors = {
  '405': { description: 'HTTP verb not allowed (see Allow)', content: json(ref('Error')) },
};
const rateErrors = {
  '429': { description: 'Rate limit exceeded (see Retry-After)', content: json(ref('Error')) },
};

/** Query parameters of a GET call: one per argument; structured arguments travel as JSON text. */
function queryParameters(schema: JsonSchema, jsonArgs: readonly string[]): JsonSchema[] {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(jsonArgs.includes(name) ? { content: json(s) } : { schema: s }),
  }));
}

/** One operation per verb of a method call: GET reads query parameters, the others a JSON (or form) body. */
function methodOperations(
  opId: string,
  summary: string,
  tags: string[],
  verbs: string[],
  schema: JsonSchema,
  jsonArgs: readonly string[],
  result: JsonSchema,
  extra: { params?: JsonSchema[]; rateLimited?: boolean; multipart?: boolean } = {},
): JsonSchema {
  const entry: JsonSchema = {};
  for (const verb of verbs.map((v) => v.toLowerCase())) {
    const hasRequired = Array.isArray(schema.required) && schema.required.length > 0;
    entry[verb] = {
      tags,
      operationId: `${opId}_${verb}`,
      summary,
      ...(verb === 'get'
        ? { parameters: [...(extra.params ?? []), ...queryParameters(schema, jsonArgs)] }
        : {
            ...(extra.params ? { parameters: extra.params } : {}),
            requestBody: {
              required: hasRequired,
              content: extra.multipart
                ? { 'multipart/form-data': { schema } }
                : { ...json(schema), 'application/x-www-form-urlencoded': { schema } },
            },
          }),
      responses: {
        '200': ok('Result', result),
        ...errors,
        ...verbErrors,
        ...(extra.rateLimited ? rateErrors : {}),
      },
    };
  }
  return entry;
}

const slugOf = (text: string) => text.replace(/[^A-Za-z0-9]+/g, '_');

/** Paths of a method row: the built-in methods and every whitelisted module function (dotted, and v2's DocType/fn). */
function methodPaths(row: RouteRow, version: 1 | 2, ctx: GeneratorContext): Record<string, JsonSchema> {
  const prefix = row.path.slice(0, row.path.indexOf('/{'));
  const envelope = version === 1 ? 'message' : 'data';
  const result = { type: 'object', properties: { [envelope]: {} } };
  const paths: Record<string, JsonSchema> = {};
  for (const b of BUILTIN_METHOD_DOCS) {
    paths[`${prefix}/${b.path}`] = methodOperations(
      `v${version}_${slugOf(b.path)}`,
      b.summary,
      ['methods'],
      b.verbs,
      b.args,
      [],
      result,
      b.multipart ? { multipart: true } : {},
    );
  }
  for (const ir of ctx.doctypes) {
    for (const m of (ctx.methods.get(ir.meta.name) ?? []).filter((x) => x.kind === 'function')) {
      const summary = `${ir.meta.name}: ${m.name}${m.allowGuest ? ' (guests allowed)' : ''}`;
      const extra = { rateLimited: m.rateLimited };
      paths[`${prefix}/${m.path}`] = methodOperations(
        `v${version}_${slugOf(m.path)}`,
        summary,
        [ir.meta.name],
        m.verbs,
        m.schema,
        m.jsonArgs,
        result,
        extra,
      );
      if (version === 2) {
        paths[`${prefix}/${encodeURIComponent(ir.meta.name)}/${m.name}`] = methodOperations(
          `v2_${ir.meta.slug}_${m.name}`,
          summary,
          [ir.meta.name],
          m.verbs,
          m.schema,
          m.jsonArgs,
          result,
          extra,
        );
      }
    }
  }
  return paths;
}

/** A document-method row: v2 `/api/v2/document/<DocType>/{name}/method/<m>`; v1 `POST /api/resource/<DocType>/{name}?run_method=<m>`. */
function documentMethodPaths(
  row: RouteRow,
  version: 1 | 2,
  ir: DocTypeIR,
  ctx: GeneratorContext,
): Record<string, JsonSchema> {
  const methods = (ctx.methods.get(ir.meta.name) ?? []).filter((m) => m.kind === 'document');
  const builtins = ir.meta.isSubmittable
    ? ['submit', 'cancel']
        .filter((b) => !methods.some((m) => m.name === b))
        .map((name) => ({
          name,
          verbs: ['POST'],
          schema: { type: 'object', properties: {} },
          jsonArgs: [] as string[],
          rateLimited: false,
        }))
    : [];
  const all = [...methods, ...builtins];
  if (all.length === 0) return {};
  const params = ir.meta.issingle ? [] : [nameParam];
  const tags = [ir.meta.name];
  const rowVerbs = row.verbs === '*' ? [] : row.verbs;
  if (version === 2) {
    const result = {
      type: 'object',
      properties: { data: {}, docs: { type: 'array', items: ref(className(ir.meta.name)) } },
    };
    const paths: Record<string, JsonSchema> = {};
    for (const m of all) {
      const verbs = m.verbs.filter((v) => rowVerbs.includes(v as Verb));
      if (!verbs.length) continue;
      const path = docTypePath(row, ir).replace('{method}', m.name);
      paths[path] = methodOperations(
        `v2_${ir.meta.slug}_method_${m.name}`,
        `Run ${m.name} on a ${ir.meta.name} (GET: read permission, POST: write)`,
        tags,
        verbs,
        m.schema,
        m.jsonArgs,
        result,
        { params, rateLimited: m.rateLimited },
      );
    }
    return paths;
  }
  const posts = all.filter((m) => m.verbs.some((v) => rowVerbs.includes(v as Verb)));
  if (!posts.length) return {};
  const runMethod = {
    name: 'run_method',
    in: 'query',
    required: true,
    schema: { type: 'string', enum: posts.map((m) => m.name) },
  };
  const body =
    posts.length === 1
      ? (posts[0] as { schema: JsonSchema }).schema
      : { oneOf: posts.map((m) => ({ title: m.name, ...m.schema })) };
  const op = methodOperations(
    `v1_${ir.meta.slug}_run_method`,
    `Run a whitelisted method on a ${ir.meta.name} (write permission)`,
    tags,
    [...rowVerbs],
    body,
    [],
    { type: 'object', properties: { data: {} } },
    { params: [...params, runMethod], rateLimited: posts.some((m) => m.rateLimited) },
  );
  return { [docTypePath(row, ir)]: op };
}

function document(version: 1 | 2, ctx: GeneratorContext): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const ir of ctx.doctypes) Object.assign(paths, docTypePaths(ir, version, ctx));
  for (const row of ROUTE_TABLE) {
    if (!row.openapi.includes(version) || row.kinds) continue;
    if (row.operation === 'method') Object.assign(paths, methodPaths(row, version, ctx));
    else if (row.operation === 'openapi')
      paths[row.path] = {
        get: {
          tags: ['meta'],
          operationId: `v${version}_openapi`,
          summary: 'This document',
          security: [],
          responses: { '200': ok('OpenAPI 3.1', { type: 'object' }) },
        },
      };
    else if (row.operation === 'bulkUpdateAcross' || row.operation === 'bulkDeleteAcross') {
      const what = row.operation === 'bulkUpdateAcross' ? 'update' : 'delete';
      paths[row.path] = {
        post: {
          tags: ['bulk'],
          operationId: `v${version}_bulk_${what}_across`,
          summary: `Bulk ${what} across DocTypes (each item in its own transaction)`,
          requestBody: { required: true, content: json(bulkRequest(row, undefined)) },
          responses: {
            [String(row.status)]: ok('Bulk result', responseSchema(row, { type: 'object' }, version)),
            ...errors,
          },
        },
      };
    } else if (row.operation === 'jobStatus') {
      paths[row.path.replace('{name}', '{job_id}')] = {
        get: {
          tags: ['jobs'],
          operationId: `v${version}_job_status`,
          summary: 'Status of a background job (the requester and System Managers only; 404 for anyone else)',
          parameters: [
            { name: 'job_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          ],
          responses: { '200': ok('The job', responseSchema(row, { type: 'object' }, version)), ...errors },
        },
      };
    } else throw new Error(`generator/emit/openapi.ts: no description for ${row.operation} (${row.path})`);
  }
  const schemas: Record<string, JsonSchema> = { Error: ERROR_SCHEMA };
  if (version === 2) Object.assign(schemas, { BulkResult: BULK_RESULT_SCHEMA, Job: JOB_SCHEMA });
  for (const ir of ctx.doctypes) schemas[className(ir.meta.name)] = documentSchema(ir.meta, ctx);
  return {
    openapi: '3.1.0',
    info: {
      title: `Doctype Service REST API v${version}`,
      version: `${version}.0.0`,
      description:
        'Code generated by generator/emit/openapi.ts from every DocType file. DO NOT EDIT. Run `npm run generate`.',
    },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : 1))),
    components: {
      schemas,
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'token <api_key>:<api_secret>',
        },
        basic: { type: 'http', scheme: 'basic', description: 'base64(api_key:api_secret)' },
        session: { type: 'apiKey', in: 'cookie', name: 'sid' },
      },
    },
    security: [{ token: [] }, { basic: [] }, { session: [] }],
  };
}

/** Emits both OpenAPI documents, keyed by output path. */
export function emitOpenApi(ctx: GeneratorContext): Map<string, string> {
  return new Map([
    ['openapi/v1.json', `${JSON.stringify(document(1, ctx), null, 2)}\n`],
    ['openapi/v2.json', `${JSON.stringify(document(2, ctx), null, 2)}\n`],
  ]);
}
