// Emits generated/openapi/v1.json and v2.json: OpenAPI 3.1 documents built from the same IR as the routes.
import type { DocTypeMeta } from '../../runtime/meta/types';
import type { GeneratorContext } from '../context';
import { bodyFields, fieldSchema, requiredFields, type JsonSchema } from '../json-schema';
import { className } from '../naming';
import type { DocTypeIR } from '../normalize';
import { BUILTIN_METHOD_DOCS } from '../methods/builtin-methods';
import { v1Operations, v2Operations } from './routes';

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
  const properties: Record<string, JsonSchema> = { doctype: { type: 'string', const: meta.name }, ...STANDARD };
  if (meta.istable) Object.assign(properties, { parent: { type: 'string' }, parentfield: { type: 'string' }, parenttype: { type: 'string' } });
  for (const f of bodyFields(meta)) properties[f.fieldname] = fieldSchema(f, ctx, child);
  const required = requiredFields(meta);
  return { type: 'object', description: `A ${meta.name} document.`, properties, ...(required.length ? { required } : {}) };
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['exc_type'],
  properties: {
    exc_type: { type: 'string' },
    exception: { type: 'string' },
    _server_messages: { type: 'string', description: 'JSON-encoded list of JSON-encoded {message, title?, indicator?}' },
    errors: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } } } },
  },
};

const errors = {
  '400': { description: 'Invalid request', content: json(ref('Error')) },
  '401': { description: 'Authentication required', content: json(ref('Error')) },
  '403': { description: 'Not permitted', content: json(ref('Error')) },
  '404': { description: 'Not found', content: json(ref('Error')) },
};

const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
const jsonParam = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } });
const intParam = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'integer', minimum: 0 } });

function v1Paths(ir: DocTypeIR): Record<string, JsonSchema> {
  const dt = ir.meta.name;
  const doc = ref(className(dt));
  const base = `/api/resource/${encodeURIComponent(dt)}`;
  const ops = new Set(v1Operations(ir));
  const tag = [dt];
  const paths: Record<string, JsonSchema> = {};
  const single = ir.meta.issingle;
  const collection: JsonSchema = {};
  if (ops.has('list')) {
    collection.get = {
      tags: tag, operationId: `v1_list_${ir.meta.slug}`, summary: `List ${dt}`,
      parameters: [jsonParam('fields', 'JSON array of fields'), jsonParam('filters', 'JSON filters'), jsonParam('order_by', 'field [asc|desc]'),
        intParam('limit_start', 'offset'), intParam('limit_page_length', 'page size (0 = up to max_page_length)')],
      responses: { '200': ok('Rows', { type: 'object', properties: { data: { type: 'array', items: doc } } }), ...errors },
    };
  }
  if (ops.has('create')) {
    collection.post = {
      tags: tag, operationId: `v1_create_${ir.meta.slug}`, summary: `Create ${dt}`,
      requestBody: { required: true, content: json(doc) },
      responses: { '201': ok('Created', { type: 'object', properties: { data: doc } }), ...errors, '409': errors['400'] },
    };
  }
  if (Object.keys(collection).length) paths[base] = collection;
  const item: JsonSchema = {};
  const itemPath = single ? base : `${base}/{name}`;
  const params = single ? [] : [nameParam];
  if (ops.has('get')) item.get = { tags: tag, operationId: `v1_get_${ir.meta.slug}`, summary: `Get ${dt}`, parameters: params, responses: { '200': ok('Document', { type: 'object', properties: { data: doc } }), ...errors } };
  if (ops.has('update')) item.put = { tags: tag, operationId: `v1_update_${ir.meta.slug}`, summary: `Update ${dt}`, parameters: params, requestBody: { required: true, content: json(doc) }, responses: { '200': ok('Saved', { type: 'object', properties: { data: doc } }), ...errors } };
  if (ops.has('delete')) item.delete = { tags: tag, operationId: `v1_delete_${ir.meta.slug}`, summary: `Delete ${dt}`, parameters: params, responses: { '202': ok('Deleted', { type: 'object', properties: { data: { const: 'ok' } } }), ...errors } };
  if (Object.keys(item).length) paths[itemPath] = { ...paths[itemPath], ...item };
  return paths;
}

function v2Paths(ir: DocTypeIR): Record<string, JsonSchema> {
  const dt = ir.meta.name;
  const doc = ref(className(dt));
  const seg = encodeURIComponent(dt);
  const base = `/api/v2/document/${seg}`;
  const ops = new Set(v2Operations(ir));
  const tag = [dt];
  const wrap = (schema: JsonSchema) => ({ type: 'object', properties: { data: schema } });
  const paths: Record<string, JsonSchema> = {};
  const single = ir.meta.issingle;
  const params = single ? [] : [nameParam];
  const collection: JsonSchema = {};
  if (ops.has('list')) {
    collection.get = {
      tags: tag, operationId: `v2_list_${ir.meta.slug}`, summary: `List ${dt}`,
      parameters: [jsonParam('fields', 'JSON array of fields'), jsonParam('filters', 'JSON object of filters'), jsonParam('order_by', 'field [asc|desc]'),
        jsonParam('group_by', 'field'), intParam('start', 'offset'), intParam('limit', 'page size')],
      responses: { '200': ok('Rows', { type: 'object', properties: { data: { type: 'array', items: doc }, has_next_page: { type: 'boolean' } } }), ...errors },
    };
  }
  if (ops.has('create')) collection.post = { tags: tag, operationId: `v2_create_${ir.meta.slug}`, summary: `Create ${dt}`, requestBody: { required: true, content: json(doc) }, responses: { '201': ok('Created', wrap(doc)), ...errors } };
  if (Object.keys(collection).length) paths[base] = collection;
  const item: JsonSchema = {};
  const itemPath = single ? base : `${base}/{name}`;
  if (ops.has('get')) item.get = { tags: tag, operationId: `v2_get_${ir.meta.slug}`, summary: `Get ${dt}`, parameters: params, responses: { '200': ok('Document', wrap(doc)), ...errors } };
  if (ops.has('update')) {
    const update = { tags: tag, parameters: params, requestBody: { required: true, content: json(doc) }, responses: { '200': ok('Saved', wrap(doc)), ...errors } };
    item.put = { ...update, operationId: `v2_update_${ir.meta.slug}`, summary: `Update ${dt}` };
    if (!single) item.patch = { ...update, operationId: `v2_patch_${ir.meta.slug}`, summary: `Update ${dt}` };
  }
  if (ops.has('delete')) item.delete = { tags: tag, operationId: `v2_delete_${ir.meta.slug}`, summary: `Delete ${dt}`, parameters: params, responses: { '202': ok('Deleted', wrap({ const: 'ok' })), ...errors } };
  if (Object.keys(item).length) paths[itemPath] = { ...paths[itemPath], ...item };
  if (ops.has('copy')) paths[`${base}/{name}/copy`] = { get: { tags: tag, operationId: `v2_copy_${ir.meta.slug}`, summary: `Copy ${dt}`, parameters: [nameParam, { name: 'ignore_no_copy', in: 'query', schema: { type: 'boolean', default: true } }], responses: { '200': ok('A clean document that can be posted as new', wrap(doc)), ...errors } } };
  if (ops.has('count')) paths[`/api/v2/doctype/${seg}/count`] = { get: { tags: tag, operationId: `v2_count_${ir.meta.slug}`, summary: `Count ${dt}`, parameters: [jsonParam('filters', 'JSON object of filters')], responses: { '200': ok('Count', wrap({ type: 'integer' })), ...errors } } };
  if (ops.has('meta')) paths[`/api/v2/doctype/${seg}/meta`] = { get: { tags: tag, operationId: `v2_meta_${ir.meta.slug}`, summary: `Metadata of ${dt}`, responses: { '200': ok('Metadata', wrap({ type: 'object' })), ...errors } } };
  return paths;
}

const verbErrors = { '405': { description: 'HTTP verb not allowed (see Allow)', content: json(ref('Error')) } };
const rateErrors = { '429': { description: 'Rate limit exceeded (see Retry-After)', content: json(ref('Error')) } };

/** Query parameters of a GET call: one per argument; structured arguments travel as JSON text. */
function queryParameters(schema: JsonSchema, jsonArgs: readonly string[]): JsonSchema[] {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name, in: 'query', required: required.has(name),
    ...(jsonArgs.includes(name) ? { content: json(s) } : { schema: s }),
  }));
}

/** One operation per verb of a method call: GET reads query parameters, the others a JSON (or form) body. */
function methodOperations(opId: string, summary: string, tags: string[], verbs: string[], schema: JsonSchema, jsonArgs: readonly string[], result: JsonSchema, extra: { params?: JsonSchema[]; rateLimited?: boolean } = {}): JsonSchema {
  const entry: JsonSchema = {};
  for (const verb of verbs.map((v) => v.toLowerCase())) {
    const hasRequired = Array.isArray(schema.required) && schema.required.length > 0;
    entry[verb] = {
      tags, operationId: `${opId}_${verb}`, summary,
      ...(verb === 'get'
        ? { parameters: [...(extra.params ?? []), ...queryParameters(schema, jsonArgs)] }
        : { ...(extra.params ? { parameters: extra.params } : {}), requestBody: { required: hasRequired, content: { ...json(schema), 'application/x-www-form-urlencoded': { schema } } } }),
      responses: { '200': ok('Result', result), ...errors, ...verbErrors, ...(extra.rateLimited ? rateErrors : {}) },
    };
  }
  return entry;
}

const slugOf = (text: string) => text.replace(/[^A-Za-z0-9]+/g, '_');

/** Paths of the built-in methods and of every whitelisted module function (dotted, and v2's DocType/fn). */
function methodPaths(version: 1 | 2, ctx: GeneratorContext): Record<string, JsonSchema> {
  const prefix = version === 1 ? '/api/method' : '/api/v2/method';
  const envelope = version === 1 ? 'message' : 'data';
  const result = { type: 'object', properties: { [envelope]: {} } };
  const paths: Record<string, JsonSchema> = {};
  for (const b of BUILTIN_METHOD_DOCS) {
    paths[`${prefix}/${b.path}`] = methodOperations(`v${version}_${slugOf(b.path)}`, b.summary, ['methods'], b.verbs, b.args, [], result);
  }
  for (const ir of ctx.doctypes) {
    for (const m of (ctx.methods.get(ir.meta.name) ?? []).filter((x) => x.kind === 'function')) {
      const summary = `${ir.meta.name}: ${m.name}${m.allowGuest ? ' (guests allowed)' : ''}`;
      const extra = { rateLimited: m.rateLimited };
      paths[`${prefix}/${m.path}`] = methodOperations(`v${version}_${slugOf(m.path)}`, summary, [ir.meta.name], m.verbs, m.schema, m.jsonArgs, result, extra);
      if (version === 2) {
        paths[`${prefix}/${encodeURIComponent(ir.meta.name)}/${m.name}`] = methodOperations(`v2_${ir.meta.slug}_${m.name}`, summary, [ir.meta.name], m.verbs, m.schema, m.jsonArgs, result, extra);
      }
    }
  }
  return paths;
}

/** Document methods: v2 `/api/v2/document/<DocType>/{name}/method/<m>`; v1 `POST /api/resource/<DocType>/{name}?run_method=<m>`. */
function documentMethodPaths(version: 1 | 2, ir: DocTypeIR, ctx: GeneratorContext): Record<string, JsonSchema> {
  if (ir.meta.istable || ir.meta.isVirtual) return {};
  const methods = (ctx.methods.get(ir.meta.name) ?? []).filter((m) => m.kind === 'document');
  const builtins = ir.meta.isSubmittable
    ? ['submit', 'cancel'].filter((b) => !methods.some((m) => m.name === b)).map((name) => ({ name, verbs: ['POST'], schema: { type: 'object', properties: {} }, jsonArgs: [] as string[], rateLimited: false }))
    : [];
  const all = [...methods, ...builtins];
  if (all.length === 0) return {};
  const seg = encodeURIComponent(ir.meta.name);
  const params = ir.meta.issingle ? [] : [nameParam];
  const tags = [ir.meta.name];
  if (version === 2) {
    const result = { type: 'object', properties: { data: {}, docs: { type: 'array', items: ref(className(ir.meta.name)) } } };
    const paths: Record<string, JsonSchema> = {};
    for (const m of all) {
      const verbs = m.verbs.filter((v) => v === 'GET' || v === 'POST');
      if (!verbs.length) continue;
      const path = `/api/v2/document/${seg}${ir.meta.issingle ? `/${seg}` : '/{name}'}/method/${m.name}`;
      paths[path] = methodOperations(`v2_${ir.meta.slug}_method_${m.name}`, `Run ${m.name} on a ${ir.meta.name} (GET: read permission, POST: write)`, tags, verbs, m.schema, m.jsonArgs, result, { params, rateLimited: m.rateLimited });
    }
    return paths;
  }
  const posts = all.filter((m) => m.verbs.includes('POST'));
  if (!posts.length) return {};
  const runMethod = { name: 'run_method', in: 'query', required: true, schema: { type: 'string', enum: posts.map((m) => m.name) } };
  const body = posts.length === 1 ? (posts[0] as { schema: JsonSchema }).schema : { oneOf: posts.map((m) => ({ title: m.name, ...m.schema })) };
  const op = methodOperations(`v1_${ir.meta.slug}_run_method`, `Run a whitelisted method on a ${ir.meta.name} (write permission)`, tags, ['POST'], body, [], { type: 'object', properties: { data: {} } }, { params: [...params, runMethod], rateLimited: posts.some((m) => m.rateLimited) });
  return { [`/api/resource/${seg}${ir.meta.issingle ? '' : '/{name}'}`]: op };
}

function document(version: 1 | 2, ctx: GeneratorContext): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const ir of ctx.doctypes) Object.assign(paths, version === 1 ? v1Paths(ir) : v2Paths(ir));
  for (const ir of ctx.doctypes) {
    for (const [path, ops] of Object.entries(documentMethodPaths(version, ir, ctx))) paths[path] = { ...paths[path], ...ops };
  }
  Object.assign(paths, methodPaths(version, ctx));
  const schemas: Record<string, JsonSchema> = { Error: ERROR_SCHEMA };
  for (const ir of ctx.doctypes) schemas[className(ir.meta.name)] = documentSchema(ir.meta, ctx);
  return {
    openapi: '3.1.0',
    info: {
      title: `Doctype Service REST API v${version}`,
      version: `${version}.0.0`,
      description: 'Code generated by generator/emit/openapi.ts from every DocType file. DO NOT EDIT. Run `npm run generate`.',
    },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : 1))),
    components: {
      schemas,
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <api_key>:<api_secret>' },
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
