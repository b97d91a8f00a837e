// Emits generated/openapi/v1.json and v2.json: OpenAPI 3.1 documents built from the route table
// (runtime/routes/route-table.ts), the DocTypes and their whitelisted methods. Schemas: openapi-schemas.ts; shared
// responses, security and parameters: openapi-parts.ts.
import type { GeneratorContext } from '../context';
import type { JsonSchema } from '../json-schema';
import { BUILTIN_METHOD_DOCS } from '../methods/builtin-methods';
import type { MethodIR } from '../methods/extract-methods';
import type { DocTypeIR } from '../normalize';
import { ROUTE_TABLE, docTypeKind, docTypeRows } from '../../runtime/routes/route-table';
import { type Operation, type RouteRow, type Verb } from '../../runtime/http/route-row';
import {
  COUNT_PARAMETERS,
  EXPAND_LINKS,
  LIST_PARAMETERS,
  SECURITY_SCHEMES,
  SERVERS,
  errors,
  json,
  ok,
  operationSecurity,
  query,
  responseComponents,
  security,
  type Access,
} from './openapi-parts';
import {
  BULK_RESULT_SCHEMA,
  ERROR_SCHEMA,
  FILTERS_SCHEMA,
  JOB_SCHEMA,
  bulkItems,
  docTypeSchemas,
  ref,
  schemaNames,
} from './openapi-schemas';
import { docTypePath } from './routes';

/** The messages a success answer may carry beside its value (msgprint): v1 `_server_messages`, v2 `messages`. */
const MESSAGES: Record<1 | 2, Record<string, JsonSchema>> = {
  1: { _server_messages: { type: 'string', description: 'JSON-encoded list of JSON-encoded {message}' } },
  2: {
    messages: {
      type: 'array',
      items: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
    },
  },
};

const requiredKeys = (keys: string[]) => (keys.length ? { required: keys } : {});

/** `{ <key>: value }` with the version's messages; `value` undefined: the key is absent. */
function envelope(
  version: 1 | 2,
  key: string,
  value: JsonSchema | undefined,
  required = true,
  more: Record<string, JsonSchema> = {},
): JsonSchema {
  return {
    type: 'object',
    properties: { ...(value ? { [key]: value } : {}), ...more, ...MESSAGES[version] },
    ...requiredKeys([
      ...(value && required ? [key] : []),
      ...Object.keys(more).filter((k) => k !== 'count' && k !== 'next_cursor'),
    ]),
  };
}

/** The operationId prefix of a path: `v1`, `v2`, or `v1_alias` for the `/api/v1/...` aliases. */
const idPrefix = (row: RouteRow, version: 1 | 2) => (row.alias ? 'v1_alias' : `v${version}`);

const nameParam = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'the document name (may contain slashes: send them encoded)',
  schema: { type: 'string' },
};

const SUMMARY: Partial<Record<Operation, string>> = {
  list: 'List',
  create: 'Create',
  get: 'Get',
  update: 'Update',
  delete: 'Delete',
  copy: 'Copy',
  count: 'Count',
  meta: 'Metadata of',
  bulkUpdate: 'Bulk update',
  bulkDelete: 'Bulk delete',
  bulkInsert: 'Bulk insert',
  export: 'Export every matching',
};

/** The success status and body of a DocType row. */
function docTypeSuccess(row: RouteRow, ir: DocTypeIR, version: 1 | 2, patch: boolean): [string, JsonSchema] {
  const names = schemaNames(ir.meta.name);
  const rows = { type: 'array', items: { anyOf: [ref(names.row), { type: 'array', items: {} }] } };
  const status = String(row.status);
  switch (row.response) {
    case 'document':
      return [
        status,
        ok(
          row.operation === 'copy'
            ? 'A clean document that can be posted as new'
            : `The ${ir.meta.name}${patch ? ' after the change' : ''}`,
          envelope(version, 'data', row.operation === 'copy' ? ref(names.create) : ref(names.read)),
        ),
      ];
    case 'documents':
      return [
        status,
        ok(
          'A page of rows (as_dict=false: lists of values)',
          envelope(
            version,
            'data',
            rows,
            true,
            version === 2
              ? {
                  has_next_page: { type: 'boolean' },
                  count: { type: 'integer', description: 'with include=count' },
                  next_cursor: {
                    type: ['string', 'null'],
                    description: 'with cursor: the cursor of the next page (null on the last)',
                  },
                }
              : {},
          ),
        ),
      ];
    case 'count':
      return [status, ok('The number of matching documents', envelope(version, 'data', { type: 'integer' }))];
    case 'meta':
      return [
        status,
        ok(
          'The DocType definition',
          envelope(version, 'data', { type: 'object', additionalProperties: true }),
        ),
      ];
    case 'ok':
      return [status, ok('Deleted', envelope(version, 'data', { type: 'string', const: 'ok' }))];
    case 'bulk-result':
      return [
        status,
        ok(
          'Each item ran in a savepoint of its own (items share one transaction per batch): a failed item changed nothing',
          envelope(
            version,
            'data',
            ref('BulkResult'),
            true,
            row.operation === 'bulkUpdate'
              ? { docs: { type: 'array', items: ref(names.read), description: 'the saved documents' } }
              : {},
          ),
        ),
      ];
    case 'export':
      return [
        status,
        {
          description:
            'Every matching document, streamed: CSV and XLSX in the Data Import template layout (child rows as `<table>.<field>` columns, one more line per child row), JSON as nested documents',
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {
              schema: { type: 'string', format: 'binary' },
            },
            'application/json': { schema: { type: 'array', items: ref(names.read) } },
          },
        },
      ];
    default:
      throw new Error(`generator/emit/openapi.ts: no success body for ${row.response} (${row.path})`);
  }
}

/** The error statuses of a DocType operation. */
function docTypeErrors(row: RouteRow): string[] {
  switch (row.operation) {
    case 'list':
    case 'count':
      return ['400', '401', '403'];
    case 'get':
      return ['400', '401', '403', '404'];
    case 'copy':
      return ['400', '401', '403', '404'];
    case 'meta':
      return ['401', '403', '404'];
    case 'create':
      return ['400', '401', '403', '409', '413', '415'];
    case 'update':
      return ['400', '401', '403', '404', '409', '413', '415'];
    case 'delete':
      return ['400', '401', '403', '404', '409'];
    default:
      return ['400', '401', '403', '413', '415'];
  }
}

/** The request body of a DocType row, if it takes one. */
function docTypeBody(row: RouteRow, ir: DocTypeIR): JsonSchema | undefined {
  const names = schemaNames(ir.meta.name);
  if (row.request === 'document')
    return { required: true, content: json(ref(row.operation === 'create' ? names.create : names.update)) };
  if (row.request === 'bulk-names')
    return {
      required: true,
      content: json({
        type: 'object',
        required: ['names'],
        properties: { names: { type: 'array', items: bulkItems('bulkDelete', ir.meta.name) } },
      }),
    };
  if (row.request === 'bulk-docs')
    return {
      required: true,
      content: json({
        type: 'object',
        required: ['docs'],
        properties: { docs: { type: 'array', items: bulkItems(row.operation, ir.meta.name) } },
      }),
    };
  return undefined;
}

/** The `202 {job_id}` answer of a bulk request over the job threshold. */
const QUEUED = {
  '202': ok('Over bulk_operation_async_threshold: queued as a background job (GET /api/v2/job/{job_id})', {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        type: 'object',
        required: ['job_id'],
        properties: { job_id: { type: 'string', format: 'uuid' } },
      },
    },
  }),
};

/** The parameters of an export: the list's columns, filters and order, and the format. */
const EXPORT_PARAMETERS = (version: 1 | 2): JsonSchema[] => [
  ...LIST_PARAMETERS[version].filter((p) =>
    ['fields', 'filters', 'or_filters', 'order_by'].includes(String(p.name)),
  ),
  query('format', 'csv (default), xlsx or json', { type: 'string', enum: ['csv', 'xlsx', 'json'] }),
];

/** The OpenAPI operations of one DocType row (document methods are `documentMethodPaths`'). */
function docTypeOperations(row: RouteRow, ir: DocTypeIR, version: 1 | 2): JsonSchema {
  const dt = ir.meta.name;
  const params: JsonSchema[] = row.path.includes('{name') && !ir.meta.issingle ? [nameParam] : [];
  if (row.request === 'list-query' && row.operation === 'export') params.push(...EXPORT_PARAMETERS(version));
  else if (row.request === 'list-query') params.push(...LIST_PARAMETERS[version]);
  if (row.request === 'count-query') params.push(...COUNT_PARAMETERS);
  if (row.request === 'copy-query')
    params.push(
      query('ignore_no_copy', 'false: fields marked no_copy are cleared too', {
        type: 'boolean',
        default: true,
      }),
    );
  if (row.operation === 'get') params.push(EXPAND_LINKS);
  const entry: JsonSchema = {};
  const verbs = row.verbs === '*' ? [] : row.verbs;
  for (const v of verbs) {
    const patch = v === 'PATCH';
    const op = patch ? 'patch' : row.operation;
    const body = docTypeBody(row, ir);
    const [status, success] = docTypeSuccess(row, ir, version, patch);
    entry[v.toLowerCase()] = {
      tags: [dt],
      operationId: `${idPrefix(row, version)}_${op}_${ir.meta.slug}`,
      summary: `${patch ? 'Change fields of' : (SUMMARY[row.operation] ?? row.operation)} ${dt}`,
      ...(v === 'GET' ? {} : operationSecurity('write')),
      ...(params.length ? { parameters: params } : {}),
      ...(body ? { requestBody: body } : {}),
      responses: {
        [status]: success,
        ...(row.response === 'bulk-result' ? QUEUED : {}),
        ...errors(...docTypeErrors(row)),
      },
    };
  }
  return entry;
}

/** The paths of every DocType row of an API version (aliases included) that serves this DocType's kind. */
function docTypePaths(ir: DocTypeIR, version: 1 | 2, ctx: GeneratorContext): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const row of docTypeRows(docTypeKind(ir.meta), version, ROUTE_TABLE, true)) {
    const found =
      row.operation === 'documentMethod'
        ? documentMethodPaths(row, version, ir, ctx)
        : { [docTypePath(row, ir)]: docTypeOperations(row, ir, version) };
    for (const [path, ops] of Object.entries(found)) paths[path] = { ...paths[path], ...ops };
  }
  return paths;
}

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

/** How a method call is described: arguments, answer, who may call it. */
interface MethodDoc {
  opId: string;
  summary: string;
  tags: string[];
  verbs: string[];
  args: JsonSchema;
  jsonArgs: readonly string[];
  /** The whole 200 body. */
  answer: JsonSchema;
  guest?: 'required' | 'optional';
  csrf?: boolean;
  params?: JsonSchema[];
  rateLimited?: boolean;
  multipart?: boolean;
}

/** Who may call a method with this verb (Access of openapi-parts.ts). */
function methodAccess(m: MethodDoc, verb: string): Access {
  if (m.guest === 'required') return 'none';
  const write = verb !== 'get' && m.csrf !== false;
  if (m.guest === 'optional') return write ? 'guest-write' : 'guest-read';
  return write ? 'write' : 'read';
}

/** One operation per verb of a method call: GET reads query parameters, the others a JSON (or form) body. */
function methodOperations(m: MethodDoc): JsonSchema {
  const entry: JsonSchema = {};
  for (const verb of m.verbs.map((v) => v.toLowerCase())) {
    const hasRequired = Array.isArray(m.args.required) && m.args.required.length > 0;
    const access = methodAccess(m, verb);
    const statuses = ['400', '401', '403', '404', '409'];
    if (verb !== 'get') statuses.push('413', '415');
    if (m.rateLimited) statuses.push('429');
    entry[verb] = {
      tags: m.tags,
      operationId: `${m.opId}_${verb}`,
      summary: m.summary,
      ...operationSecurity(access),
      ...(verb === 'get'
        ? { parameters: [...(m.params ?? []), ...queryParameters(m.args, m.jsonArgs)] }
        : {
            ...(m.params ? { parameters: m.params } : {}),
            requestBody: {
              required: hasRequired,
              content: m.multipart
                ? { 'multipart/form-data': { schema: m.args } }
                : { ...json(m.args), 'application/x-www-form-urlencoded': { schema: m.args } },
            },
          }),
      responses: { '200': ok('Result', m.answer), ...errors(...statuses) },
    };
  }
  return entry;
}

const slugOf = (text: string) => text.replace(/[^A-Za-z0-9]+/g, '_');

/** The answer of a whitelisted function or method: its result in the version's key. */
function methodAnswer(m: MethodIR, version: 1 | 2, key: 'data' | 'message', docs?: JsonSchema): JsonSchema {
  return envelope(version, key, m.result.schema, !m.result.optional, docs ? { docs } : {});
}

/** Paths of a method row: the built-in methods and every whitelisted module function (dotted, and v2's DocType/fn). */
function methodPaths(
  row: RouteRow,
  version: 1 | 2,
  ctx: GeneratorContext,
  schemas: ReadonlySet<string>,
): Record<string, JsonSchema> {
  const prefix = row.path.slice(0, row.path.indexOf('/{'));
  const key = version === 1 ? 'message' : 'data';
  const id = idPrefix(row, version);
  const paths: Record<string, JsonSchema> = {};
  for (const b of BUILTIN_METHOD_DOCS) {
    if (b.v2Only && version !== 2) continue;
    // A result naming a DocType this set lacks (File) is any object.
    const target = typeof b.result?.$ref === 'string' ? b.result.$ref.split('/').pop() : undefined;
    const result = target && !schemas.has(target) ? { type: 'object', additionalProperties: true } : b.result;
    paths[`${prefix}/${b.path}`] = methodOperations({
      opId: `${id}_${slugOf(b.path)}`,
      summary: b.summary,
      tags: ['methods'],
      verbs: b.verbs,
      args: b.args,
      jsonArgs: b.jsonArgs ?? [],
      answer: b.raw ?? envelope(version, key, result),
      guest: b.guest,
      csrf: b.csrf,
      rateLimited: b.rateLimited,
      multipart: b.multipart,
    });
  }
  for (const ir of ctx.doctypes) {
    for (const m of (ctx.methods.get(ir.meta.name) ?? []).filter((x) => x.kind === 'function')) {
      const doc = (opId: string): MethodDoc => ({
        opId,
        summary: `${ir.meta.name}: ${m.name}${m.allowGuest ? ' (guests allowed)' : ''}`,
        tags: [ir.meta.name],
        verbs: m.verbs,
        args: m.schema,
        jsonArgs: m.jsonArgs,
        answer: methodAnswer(m, version, key),
        guest: m.allowGuest ? 'optional' : undefined,
        rateLimited: m.rateLimited,
      });
      paths[`${prefix}/${m.path}`] = methodOperations(doc(`${id}_${slugOf(m.path)}`));
      if (version === 2)
        paths[`${prefix}/${encodeURIComponent(ir.meta.name)}/${m.name}`] = methodOperations(
          doc(`v2_${ir.meta.slug}_${m.name}`),
        );
    }
  }
  return paths;
}

/** The submit and cancel a submittable DocType answers as document methods, unless its controller defines them. */
export function documentMethods(ir: DocTypeIR, ctx: GeneratorContext): MethodIR[] {
  const methods = (ctx.methods.get(ir.meta.name) ?? []).filter((m) => m.kind === 'document');
  const builtins: MethodIR[] = ir.meta.isSubmittable
    ? ['submit', 'cancel']
        .filter((b) => !methods.some((m) => m.name === b))
        .map((name) => ({
          kind: 'document',
          name,
          path: name,
          verbs: ['POST'],
          allowGuest: false,
          rateLimited: false,
          schema: { type: 'object', properties: {} },
          jsonArgs: [],
          result: { optional: true },
        }))
    : [];
  return [...methods, ...builtins];
}

/** A document-method row: v2 `/api/v2/document/<DocType>/{name}/method/<m>`; v1 `POST /api/resource/<DocType>/{name}?run_method=<m>`. */
function documentMethodPaths(
  row: RouteRow,
  version: 1 | 2,
  ir: DocTypeIR,
  ctx: GeneratorContext,
): Record<string, JsonSchema> {
  const all = documentMethods(ir, ctx);
  if (all.length === 0) return {};
  const params = ir.meta.issingle ? [] : [nameParam];
  const tags = [ir.meta.name];
  const rowVerbs = row.verbs === '*' ? [] : row.verbs;
  const read = ref(schemaNames(ir.meta.name).read);
  if (version === 2) {
    const paths: Record<string, JsonSchema> = {};
    for (const m of all) {
      const verbs = m.verbs.filter((v) => rowVerbs.includes(v as Verb));
      if (!verbs.length) continue;
      const path = docTypePath(row, ir).replace('{method}', m.name);
      paths[path] = methodOperations({
        opId: `v2_${ir.meta.slug}_method_${m.name}`,
        summary: `Run ${m.name} on a ${ir.meta.name} (GET: read permission, POST: write)`,
        tags,
        verbs,
        args: m.schema,
        jsonArgs: m.jsonArgs,
        answer: methodAnswer(m, version, 'data', { type: 'array', items: read }),
        params,
        rateLimited: m.rateLimited,
      });
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
  const one = posts.length === 1 ? posts[0] : undefined;
  const args = one ? one.schema : { oneOf: posts.map((m) => ({ title: m.name, ...m.schema })) };
  const answer = one
    ? methodAnswer(one, version, 'data')
    : envelope(
        version,
        'data',
        { anyOf: posts.map((m) => ({ title: m.name, ...(m.result.schema ?? {}) })) },
        false,
      );
  const op = methodOperations({
    opId: `${idPrefix(row, version)}_${ir.meta.slug}_run_method`,
    summary: `Run a whitelisted method on a ${ir.meta.name} (write permission)`,
    tags,
    verbs: [...rowVerbs],
    args,
    jsonArgs: [],
    answer,
    params: [...params, runMethod],
    rateLimited: posts.some((m) => m.rateLimited),
  });
  return { [docTypePath(row, ir)]: op };
}

/** The paths of a row that serves no DocType: methods, the documents themselves, bulk across DocTypes, jobs. */
const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });
/** The headers of a served file (200 and 206). */
const FILE_HEADERS: Record<string, JsonSchema> = {
  ETag: header('size and modification time of the stored file'),
  'Last-Modified': header('modification time of the stored file (HTTP date)'),
  'Accept-Ranges': header('bytes'),
  'Content-Disposition': header(
    'inline for raster images (PNG, JPEG, GIF, WebP, BMP, ICO), attachment for everything else; filename and filename*',
  ),
  'X-Content-Type-Options': header('nosniff'),
  'Content-Security-Policy': header("sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"),
  'Cache-Control': header('public, no-cache (a public file) or private, no-cache (a private one)'),
};
/** The bytes of a served file: the Content-Type is decided from the bytes (magic numbers), never from the name. */
const FILE_BYTES = {
  '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
};

/** GET of a stored file: `/files/{name}` without credentials, `/private/files/{name}` for readers of the File. */
function filePaths(row: RouteRow, version: 1 | 2): Record<string, JsonSchema> {
  const isPrivate = row.path.startsWith('/private/');
  return {
    [row.path.replace('{name+}', '{name}')]: {
      get: {
        tags: ['files'],
        operationId: `${idPrefix(row, version)}_${isPrivate ? 'private_file' : 'public_file'}`,
        summary: isPrivate
          ? 'A private file, for its owner, readers of the document it is attached to and System Managers (403 for anyone else, whether or not it exists)'
          : 'A public file, to anyone (no credentials read)',
        ...(isPrivate ? {} : { security: [] }),
        parameters: [
          {
            name: 'name',
            in: 'path',
            required: true,
            description:
              'the stored name (the last part of file_url); a name with a separator, `..`, `%`, NUL or a leading dot is 404',
            schema: { type: 'string' },
          },
          {
            name: 'Range',
            in: 'header',
            required: false,
            description:
              'one byte range (bytes=0-99, bytes=100-, bytes=-100); several ranges get the whole file',
            schema: { type: 'string' },
          },
          { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' } },
          { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
          { name: 'If-Modified-Since', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'The file, streamed', headers: FILE_HEADERS, content: FILE_BYTES },
          '206': {
            description: 'The range asked for',
            headers: { ...FILE_HEADERS, 'Content-Range': header('bytes start-end/size') },
            content: FILE_BYTES,
          },
          '304': { description: 'Not modified (If-None-Match or If-Modified-Since)' },
          ...errors(...(isPrivate ? ['401', '403'] : []), '404'),
          '416': {
            description: 'RangeNotSatisfiableError: the range starts past the end',
            headers: { 'Content-Range': header('bytes */size') },
            content: json(ref('Error')),
          },
        },
      },
    },
  };
}

function otherPaths(
  row: RouteRow,
  version: 1 | 2,
  ctx: GeneratorContext,
  schemas: ReadonlySet<string>,
): Record<string, JsonSchema> {
  const id = idPrefix(row, version);
  switch (row.operation) {
    case 'method':
      return methodPaths(row, version, ctx, schemas);
    case 'openapi':
      return {
        [row.path]: {
          get: {
            tags: ['meta'],
            operationId: `${id}_openapi`,
            summary: 'This document (minified; gzip or br by Accept-Encoding; ETag)',
            security: [],
            responses: {
              '200': ok('OpenAPI 3.1', { type: 'object', additionalProperties: true }),
              '304': { description: 'Not modified (If-None-Match)' },
              ...errors('401'),
            },
          },
        },
      };
    case 'bulkUpdateAcross':
    case 'bulkDeleteAcross': {
      const what = row.operation === 'bulkUpdateAcross' ? 'update' : 'delete';
      return {
        [row.path]: {
          post: {
            tags: ['bulk'],
            operationId: `${id}_bulk_${what}_across`,
            summary: `Bulk ${what} across DocTypes (each item in a savepoint of its own)`,
            ...operationSecurity('write'),
            requestBody: {
              required: true,
              content: json({
                type: 'object',
                required: ['docs'],
                properties: { docs: { type: 'array', items: bulkItems(row.operation, undefined) } },
              }),
            },
            responses: {
              '200': ok('Bulk result', envelope(version, 'data', ref('BulkResult'))),
              ...QUEUED,
              ...errors('400', '401', '403', '413', '415'),
            },
          },
        },
      };
    }
    case 'file':
      return filePaths(row, version);
    case 'jobStatus':
      return {
        [row.path.replace('{name}', '{job_id}')]: {
          get: {
            tags: ['jobs'],
            operationId: `${id}_job_status`,
            summary:
              'Status of a background job (the requester and System Managers only; 404 for anyone else)',
            parameters: [
              { name: 'job_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
            ],
            responses: {
              '200': ok('The job', envelope(version, 'data', ref('Job'))),
              ...errors('401', '404'),
            },
          },
        },
      };
    default:
      throw new Error(`generator/emit/openapi.ts: no description for ${row.operation} (${row.path})`);
  }
}

/** The specification extension that carries the generated-file header in the committed JSON. */
const GENERATED_MARKER = 'x-generated';

/** What each document tells its readers (Swagger UI shows it under the title). */
const API_DESCRIPTION: Record<1 | 2, string> = {
  1:
    "Frappe's REST API v1 for this site's DocTypes: documents under /api/resource/{DocType} (also /api/v1/resource), " +
    'methods under /api/method/{method} with the result in `message`. Authenticate with an API key ' +
    '(`Authorization: token key:secret`, or HTTP Basic), an OAuth bearer token, or the session cookie of ' +
    '/api/method/login (writes then send its CSRF token in `X-Frappe-CSRF-Token`). Errors answer the `Error` body.',
  2:
    "Frappe's REST API v2 for this site's DocTypes: documents under /api/v2/document/{DocType}, counts and metadata " +
    'under /api/v2/doctype/{DocType}, methods under /api/v2/method/{method} with the result in `data`, bulk ' +
    'operations and background jobs. Authenticate with an API key (`Authorization: token key:secret`, or HTTP Basic), ' +
    'an OAuth bearer token, or the session cookie of /api/v2/method/login (writes then send its CSRF token in ' +
    '`X-Frappe-CSRF-Token`). Errors answer the `Error` body.',
};

/** Every `$ref` target reachable from `value`, following component schemas transitively. */
function reachable(value: unknown, components: Record<string, Record<string, JsonSchema>>): Set<string> {
  const seen = new Set<string>();
  // A plain loop over the keys: the paths of the 766 fixture DocTypes hold some 300,000 values (v2: 410,000), and an
  // array of entries per object made this walk about 40 % of building the document.
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      for (const item of v) walk(item);
      return;
    }
    const object = v as Record<string, unknown>;
    const ref = object.$ref;
    if (typeof ref === 'string' && !seen.has(ref)) {
      seen.add(ref);
      const [, , kind, name] = ref.split('/');
      walk(components[kind as string]?.[name as string]);
    }
    for (const key in object) if (key !== '$ref') walk(object[key]);
  };
  walk(value);
  return seen;
}

/** The component schemas of every DocType, by name: the same in both documents, so built once. */
function allDocTypeSchemas(ctx: GeneratorContext): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  const shared = new Set(['Error', 'Filters', 'BulkResult', 'Job']);
  for (const ir of ctx.doctypes) {
    for (const [name, schema] of Object.entries(docTypeSchemas(ir.meta, ctx))) {
      if (name in schemas || shared.has(name))
        throw new Error(`OpenAPI schema name ${name} is taken twice (DocType ${ir.meta.name})`);
      schemas[name] = schema;
    }
  }
  return schemas;
}

function document(
  version: 1 | 2,
  ctx: GeneratorContext,
  docTypeComponents: Record<string, JsonSchema>,
): JsonSchema {
  const schemas: Record<string, JsonSchema> = { Error: ERROR_SCHEMA, Filters: FILTERS_SCHEMA };
  if (version === 2) Object.assign(schemas, { BulkResult: BULK_RESULT_SCHEMA, Job: JOB_SCHEMA });
  Object.assign(schemas, docTypeComponents);
  const paths: Record<string, JsonSchema> = {};
  for (const ir of ctx.doctypes) Object.assign(paths, docTypePaths(ir, version, ctx));
  const known = new Set(Object.keys(schemas));
  for (const row of ROUTE_TABLE) {
    if (!row.openapi.includes(version) || row.kinds) continue;
    Object.assign(paths, otherPaths(row, version, ctx, known));
  }
  // Only what the paths use: a DocType's create schema is unused when nothing creates it (a single's child table).
  const components: Record<string, Record<string, JsonSchema>> = { schemas, responses: responseComponents() };
  const used = reachable(paths, components);
  const keep = (kind: string, all: Record<string, JsonSchema>) =>
    Object.fromEntries(Object.entries(all).filter(([name]) => used.has(`#/components/${kind}/${name}`)));
  return {
    openapi: '3.1.0',
    // For the repository's readers; the server leaves it out of the document it serves (runtime/routes/openapi-document.ts).
    [GENERATED_MARKER]:
      'Code generated by generator/emit/openapi.ts from every DocType file. DO NOT EDIT. Run `npm run generate`.',
    info: {
      title: `Doctype Service REST API v${version}`,
      version: `${version}.0.0`,
      description: API_DESCRIPTION[version],
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: SERVERS,
    security: security('read'),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : 1))),
    components: {
      schemas: keep('schemas', schemas),
      responses: keep('responses', components.responses as Record<string, JsonSchema>),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** Emits both OpenAPI documents, keyed by output path. */
export function emitOpenApi(ctx: GeneratorContext): Map<string, string> {
  const schemas = allDocTypeSchemas(ctx);
  return new Map([
    ['openapi/v1.json', `${JSON.stringify(document(1, ctx, schemas), null, 2)}\n`],
    ['openapi/v2.json', `${JSON.stringify(document(2, ctx, schemas), null, 2)}\n`],
  ]);
}
