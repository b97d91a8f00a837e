// The route table: every path the service answers, as data. The runtime's matcher, 404/405 answers and dispatch, the
// generated per-DocType route modules and the OpenAPI documents are all built from these rows (docs/architecture.md).
// Pure data, its row types in http/route-row.ts (the request contract), so the generator can read it without loading
// the runtime.
import type { DocTypeKind, RouteRow } from '../http/route-row';
import type { DocTypeMeta } from '../meta/types';
import { FILE_ROUTES } from './file-routes';

const ALL = ['all'] as const;

/** A v1 row, answered under `/api` and `/api/v1` (the alias is described in the v1 document too). */
function v1(rest: string, row: Omit<RouteRow, 'path' | 'openapi'>): RouteRow[] {
  return [
    { ...row, path: `/api${rest}`, openapi: [1] },
    { ...row, path: `/api/v1${rest}`, openapi: [1], alias: true },
  ];
}

/** A v2 row. */
function v2(rest: string, row: Omit<RouteRow, 'path' | 'openapi'>): RouteRow {
  return { ...row, path: `/api/v2${rest}`, openapi: [2] };
}

const DOC = { envelope: 'data', scopes: ALL } as const;
const LISTABLE: readonly DocTypeKind[] = ['document'];
const STORED: readonly DocTypeKind[] = ['document', 'single'];

/** v1: `/api/resource/...` (and `/api/v1/resource/...`). GET/POST `{name}` with `run_method` run a document method. */
const V1_RESOURCE_ROUTES: RouteRow[] = [
  ...v1('/resource/{doctype}', {
    ...DOC,
    verbs: ['GET'],
    operation: 'list',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'list',
    request: 'list-query',
    response: 'documents',
  }),
  ...v1('/resource/{doctype}', {
    ...DOC,
    verbs: ['POST'],
    operation: 'create',
    status: 201,
    kinds: LISTABLE,
    doctypeOperation: 'create',
    request: 'document',
    response: 'document',
  }),
  ...v1('/resource/{doctype}/{name+}', {
    ...DOC,
    verbs: ['GET'],
    operation: 'get',
    status: 200,
    kinds: STORED,
    doctypeOperation: 'get',
    request: 'none',
    response: 'document',
  }),
  ...v1('/resource/{doctype}/{name+}', {
    ...DOC,
    verbs: ['POST'],
    operation: 'documentMethod',
    status: 200,
    kinds: STORED,
    request: 'method-args',
    response: 'method-result',
  }),
  ...v1('/resource/{doctype}/{name+}', {
    ...DOC,
    verbs: ['PUT'],
    operation: 'update',
    status: 200,
    kinds: STORED,
    doctypeOperation: 'update',
    request: 'document',
    response: 'document',
  }),
  ...v1('/resource/{doctype}/{name+}', {
    ...DOC,
    verbs: ['DELETE'],
    operation: 'delete',
    status: 202,
    kinds: LISTABLE,
    doctypeOperation: 'delete',
    request: 'none',
    response: 'ok',
  }),
];

/** v2: `/api/v2/document/...` and `/api/v2/doctype/...`. Rows are tried in order: `/method/{m}` and `/copy` before `{name+}`. */
const V2_DOCUMENT_ROUTES: RouteRow[] = [
  v2('/document/{doctype}', {
    ...DOC,
    verbs: ['GET'],
    operation: 'list',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'list',
    request: 'list-query',
    response: 'documents',
  }),
  v2('/document/{doctype}', {
    ...DOC,
    verbs: ['POST'],
    operation: 'create',
    status: 201,
    kinds: LISTABLE,
    doctypeOperation: 'create',
    request: 'document',
    response: 'document',
  }),
  // Before `{name+}`: a GET of `.../export` is the export (a document named `export` is read by v1 or filters).
  v2('/document/{doctype}/export', {
    ...DOC,
    envelope: 'raw',
    verbs: ['GET'],
    operation: 'export',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'export',
    request: 'list-query',
    response: 'export',
  }),
  // Bulk rows before `{name+}`: a POST to `.../bulk_update` is the bulk operation (GET still reads a document so named).
  v2('/document/{doctype}/bulk_update', {
    ...DOC,
    verbs: ['POST'],
    operation: 'bulkUpdate',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'bulk_update',
    request: 'bulk-docs',
    response: 'bulk-result',
  }),
  v2('/document/{doctype}/bulk_delete', {
    ...DOC,
    verbs: ['POST'],
    operation: 'bulkDelete',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'bulk_delete',
    request: 'bulk-names',
    response: 'bulk-result',
  }),
  v2('/document/{doctype}/bulk_insert', {
    ...DOC,
    verbs: ['POST'],
    operation: 'bulkInsert',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'bulk_insert',
    request: 'bulk-docs',
    response: 'bulk-result',
  }),
  v2('/document/{doctype}/{name+}/method/{method}', {
    ...DOC,
    verbs: ['GET', 'POST'],
    operation: 'documentMethod',
    status: 200,
    kinds: STORED,
    request: 'method-args',
    response: 'method-result',
  }),
  v2('/document/{doctype}/{name+}/copy', {
    ...DOC,
    verbs: ['GET'],
    operation: 'copy',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'copy',
    request: 'copy-query',
    response: 'document',
  }),
  v2('/document/{doctype}/{name+}', {
    ...DOC,
    verbs: ['GET'],
    operation: 'get',
    status: 200,
    kinds: STORED,
    doctypeOperation: 'get',
    request: 'none',
    response: 'document',
  }),
  v2('/document/{doctype}/{name+}', {
    ...DOC,
    verbs: ['PUT', 'PATCH'],
    operation: 'update',
    status: 200,
    kinds: STORED,
    doctypeOperation: 'update',
    request: 'document',
    response: 'document',
  }),
  v2('/document/{doctype}/{name+}', {
    ...DOC,
    verbs: ['DELETE'],
    operation: 'delete',
    status: 202,
    kinds: LISTABLE,
    doctypeOperation: 'delete',
    request: 'none',
    response: 'ok',
  }),
  v2('/doctype/{doctype}/count', {
    ...DOC,
    verbs: ['GET'],
    operation: 'count',
    status: 200,
    kinds: LISTABLE,
    doctypeOperation: 'count',
    request: 'count-query',
    response: 'count',
  }),
  v2('/doctype/{doctype}/meta', {
    ...DOC,
    verbs: ['GET'],
    operation: 'meta',
    status: 200,
    kinds: ['document', 'single', 'child'],
    doctypeOperation: 'meta',
    request: 'none',
    response: 'meta',
  }),
];

/** Bulk operations across DocTypes: literal rows, so they win over the method family `/api/v2/method/{method+}`. */
const BULK_ACROSS_ROUTES: RouteRow[] = [
  v2('/method/bulk_update', {
    ...DOC,
    verbs: ['POST'],
    operation: 'bulkUpdateAcross',
    status: 200,
    request: 'bulk-docs',
    response: 'bulk-result',
  }),
  v2('/method/bulk_delete', {
    ...DOC,
    verbs: ['POST'],
    operation: 'bulkDeleteAcross',
    status: 200,
    request: 'bulk-docs',
    response: 'bulk-result',
  }),
];

/** Server-sent events of a DocType or a document (runtime/events/event-stream.ts): a stream, no OpenAPI operation. */
const EVENT_ROUTES: RouteRow[] = [
  {
    verbs: ['GET'],
    path: '/api/v2/events',
    operation: 'eventStream',
    status: 200,
    envelope: 'raw',
    openapi: [],
    scopes: ALL,
    request: 'none',
    response: 'ok',
  },
];

/** Background jobs: the status of a job a bulk request queued. */
const JOB_ROUTES: RouteRow[] = [
  v2('/job/{name}', {
    ...DOC,
    verbs: ['GET'],
    operation: 'jobStatus',
    status: 200,
    request: 'none',
    response: 'job',
  }),
];

const METHOD = {
  verbs: '*',
  operation: 'method',
  status: 200,
  envelope: 'version',
  request: 'method-args',
  response: 'method-result',
} as const;

/**
 * Method families: the rest of the path names the method, dispatched by name through a map (built-ins, then the
 * generated method table; server scripts and OAuth endpoints join those maps, not this table). A built-in method may
 * waive the CSRF token itself (`csrf: false`: login, which starts the session).
 */
const METHOD_ROUTES: RouteRow[] = [...v1('/method/{method+}', METHOD), v2('/method/{method+}', METHOD)];

const OPENAPI = {
  verbs: ['GET'],
  operation: 'openapi',
  status: 200,
  envelope: 'raw',
  request: 'none',
  response: 'openapi',
} as const;

/** The OpenAPI documents themselves. */
const OPENAPI_ROUTES: RouteRow[] = [...v1('/openapi.json', OPENAPI), v2('/openapi.json', OPENAPI)];

const PROBE = {
  verbs: ['GET'],
  status: 200,
  envelope: 'raw',
  openapi: [],
  request: 'none',
  response: 'ok',
} as const;

/**
 * Probes for load balancers and orchestrators (not in the OpenAPI documents): `/api/health` says the process answers,
 * `/api/ready` that the database (and Redis, when configured) answer too, else 503; `/api/metrics` is the Prometheus
 * exposition, for Administrator and the site config's `metrics_roles`.
 */
const PROBE_ROUTES: RouteRow[] = [
  { ...PROBE, path: '/api/health', operation: 'health' },
  { ...PROBE, path: '/api/ready', operation: 'ready' },
  { ...PROBE, path: '/api/metrics', operation: 'metrics' },
];

/**
 * The sign-in page of browser flows (OAuth authorize sends a signed-out user here): server-rendered HTML, outside the
 * API documents. No CSRF token: the form starts the session (the `login` method waives it too).
 */
const SIGN_IN_ROUTES: RouteRow[] = [
  {
    verbs: ['GET', 'POST'],
    path: '/login',
    operation: 'signIn',
    status: 200,
    envelope: 'raw',
    openapi: [],
    csrf: false,
    request: 'none',
    response: 'ok',
  },
];

const DOCS = {
  verbs: ['GET'],
  status: 200,
  envelope: 'raw',
  openapi: [],
  request: 'none',
  response: 'file',
} as const;

/** The API docs page (Swagger UI on the v2 document, the DocType diagram) and its assets, served from this origin. */
const DOCS_ROUTES: RouteRow[] = [
  { ...DOCS, path: '/api/docs', operation: 'docs' },
  { ...DOCS, path: '/api/docs/{name}', operation: 'docsAsset' },
];

/** OpenID discovery (the provider metadata and its signing keys), where standard clients look for them. */
const WELL_KNOWN_ROUTES: RouteRow[] = [
  { ...PROBE, path: '/.well-known/openid-configuration', operation: 'openidConfiguration' },
  { ...PROBE, path: '/.well-known/jwks.json', operation: 'jwks' },
];

/** Every route, in matching order within a path (see `route-matcher.ts`). New families append their rows here. */
export const ROUTE_TABLE: readonly RouteRow[] = [
  ...V1_RESOURCE_ROUTES,
  ...V2_DOCUMENT_ROUTES,
  ...BULK_ACROSS_ROUTES,
  ...JOB_ROUTES,
  ...EVENT_ROUTES,
  ...METHOD_ROUTES,
  ...OPENAPI_ROUTES,
  ...FILE_ROUTES,
  ...PROBE_ROUTES,
  ...SIGN_IN_ROUTES,
  ...DOCS_ROUTES,
  ...WELL_KNOWN_ROUTES,
];

/** The kind of a DocType: virtual DocTypes are served like child tables (metadata only). */
export function docTypeKind(meta: Pick<DocTypeMeta, 'istable' | 'issingle' | 'isVirtual'>): DocTypeKind {
  if (meta.istable || meta.isVirtual) return 'child';
  return meta.issingle ? 'single' : 'document';
}

/** The rows an API version serves for a kind of DocType, in table order (`withAliases`: the `/api/v1` rows too). */
export function docTypeRows(
  kind: DocTypeKind,
  version: 1 | 2,
  table: readonly RouteRow[] = ROUTE_TABLE,
  withAliases = false,
): RouteRow[] {
  return table.filter(
    (row) => row.kinds?.includes(kind) && row.openapi.includes(version) && (withAliases || !row.alias),
  );
}
