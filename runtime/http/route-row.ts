// The route table's row types (runtime/routes/route-table.ts holds the rows): what a request matched, read by the
// middleware and handlers through the request state (`state.route`), and by the generator for route modules and OpenAPI.
// Types, the DocType operations and a row's key, importing nothing: the generator reads them without loading the runtime.

/** The HTTP verbs a row may name; `*` answers every verb (the operation refuses what it does not take, 405). */
export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The names a path template may capture: `{doctype}`, `{name}`, `{method}`; `{name+}` takes the rest, slashes too. */
export type ParamName = 'doctype' | 'name' | 'method';

/** The values a matched path captured, decoded; a name the row's template does not capture is `''`. */
export type RouteParams = Record<ParamName, string>;

/**
 * The operations rows dispatch to (`runtime/routes/route-handlers.ts` holds one handler per name). DocType operations
 * (`list` … `meta`) are also what a DocType answers per version: see `DOCTYPE_OPERATIONS`.
 */
export type Operation =
  | 'list'
  | 'create'
  | 'get'
  | 'update'
  | 'delete'
  | 'copy'
  | 'count'
  | 'meta'
  | 'documentMethod'
  | 'method'
  | 'openapi'
  | 'bulkUpdate'
  | 'bulkDelete'
  | 'bulkInsert'
  | 'bulkUpdateAcross'
  | 'bulkDeleteAcross'
  | 'file'
  | 'health'
  | 'ready'
  | 'metrics'
  | 'jobStatus'
  | 'export'
  | 'eventStream'
  | 'signIn'
  | 'docs'
  | 'docsAsset'
  | 'openidConfiguration'
  | 'jwks';

/** The operations a DocType may answer (checked per DocType by `bindingFor`, from its generated route modules). */
export const DOCTYPE_OPERATIONS = [
  'list',
  'create',
  'get',
  'update',
  'delete',
  'copy',
  'count',
  'meta',
  'bulk_update',
  'bulk_delete',
  'bulk_insert',
  'export',
] as const satisfies readonly (Operation | 'bulk_update' | 'bulk_delete' | 'bulk_insert')[];

/** An operation a DocType may answer. */
export type DocTypeOperation = (typeof DOCTYPE_OPERATIONS)[number];

/** What kind of DocType a row serves: ordinary documents, singles (the name is the DocType's), child tables. */
export type DocTypeKind = 'document' | 'single' | 'child';

/** Where a request's input comes from, for the OpenAPI documents and the generated route types. */
export type RequestShape =
  | 'none'
  | 'document'
  | 'list-query'
  | 'count-query'
  | 'copy-query'
  | 'method-args'
  /** `{ docs: [...] }`: updates (`name` + fields), new documents, or cross-DocType items (`doctype`, `name` …). */
  | 'bulk-docs'
  /** `{ names: [...] }`. */
  | 'bulk-names';

/** What a success answer holds inside its envelope. */
export type ResponseShape =
  | 'document'
  | 'documents'
  | 'count'
  | 'meta'
  | 'ok'
  | 'method-result'
  | 'openapi'
  /** The bulk result object (SPEC 2.5) in `data`; a bulk update adds the saved documents as `docs`. */
  | 'bulk-result'
  /** A stored file's bytes (raw, streamed). */
  | 'file'
  /** A background job: `{ job_id, status, progress, result, error }`. */
  | 'job'
  /** An export: the documents as CSV, XLSX or JSON bytes (raw, streamed). */
  | 'export';

/** One route: a verb (or every verb) on a path template, the operation it runs and the answer it gives. */
export interface RouteRow {
  /** The verbs the row answers; `'*'`: every verb reaches the operation, which answers 405 itself. */
  verbs: readonly Verb[] | '*';
  /** Path template: literal text, `{param}` (one segment), `{name+}` (the rest, `/` included). Case-sensitive. */
  path: string;
  /** The handler the row dispatches to. */
  operation: Operation;
  /** HTTP status of a success answer. */
  status: 200 | 201 | 202;
  /** The success body: `{ data }`, `{ message }`, by the path's API version (`data` v2, `message` v1), or raw. */
  envelope: 'data' | 'message' | 'version' | 'raw';
  /** The OpenAPI document(s) that describe the row (`[]`: none, e.g. the health probes). */
  openapi: readonly (1 | 2)[];
  /** True on the `/api/v1/...` alias of a `/api/...` row: described in the v1 document, left out of `docTypeRows`. */
  alias?: boolean;
  /** The DocType kinds the row serves (a `{doctype}` row); the generator emits the row per DocType of these kinds. */
  kinds?: readonly DocTypeKind[];
  /** The DocType operation the row performs, when it is one (checked against the DocType's operations). */
  doctypeOperation?: DocTypeOperation;
  /** False: no CSRF token is asked of a session for this row. Default true. */
  csrf?: boolean;
  /** Bearer token scopes the row needs (resource rows: `all`); methods check their own. */
  scopes?: readonly string[];
  /** Request and response schema references (the generated validators and interfaces of the DocType). */
  request: RequestShape;
  response: ResponseShape;
}

/** A route found for a path and verb: the table's row and what its template captured. */
export interface RouteMatch {
  row: RouteRow;
  params: RouteParams;
}

/** A DocType row's key within its API version: its DocType operation, else its operation (`documentMethod`). */
export const docTypeRouteKey = (row: Pick<RouteRow, 'operation' | 'doctypeOperation'>): string =>
  row.doctypeOperation ?? row.operation;

/** The key of a DocType row: its DocType operation, or `documentMethod`. */
export type DocTypeRouteKey = DocTypeOperation | 'documentMethod';
