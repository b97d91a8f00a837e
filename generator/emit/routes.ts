// Emits generated/routes/v1/<slug>.ts and generated/routes/v2/<slug>.ts: the routes a DocType serves, read from the route
// table (runtime/routes/route-table.ts), which the runtime dispatches the DocType's requests to, and each route's
// request and response typed by the DocType's generated interface.
import { docTypeRouteKey, type RouteRow } from '../../runtime/http/route-row';
import { docTypeKind, docTypeRows } from '../../runtime/routes/route-table';
import { RUNTIME_INTERNAL, type GeneratorContext } from '../context';
import { className } from '../naming';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { importLine, interfaceText } from '../ts/declarations';
import { modelPath } from './model';
import { lazyValidatorCall, validatorPath } from './validator';

/** Path of a DocType's route module for an API version. */
export const routesPath = (ir: DocTypeIR, version: 1 | 2) => `routes/v${version}/${ir.meta.slug}.ts`;

/**
 * A row's path for one DocType, as the OpenAPI documents write it: `{doctype}` is the DocType's name (encoded), `{name}`
 * the document's (a single's is its DocType's name), other captures stay templates.
 */
export function docTypePath(row: RouteRow, ir: DocTypeIR): string {
  const seg = encodeURIComponent(ir.meta.name);
  return row.path
    .replace('{doctype}', seg)
    .replace(/\{name\+?\}/, ir.meta.issingle ? seg : '{name}')
    .replace(/\{(\w+)\+\}/g, '{$1}');
}

/** The request and response type of a row for a DocType whose document interface is `doc`. */
function routeType(row: RouteRow, doc: string, version: 1 | 2): string {
  const request: Record<RouteRow['request'], string | undefined> = {
    none: undefined,
    document: `Partial<${doc}>`,
    'list-query': 'Record<string, string>',
    'count-query': 'Record<string, string>',
    'copy-query': '{ ignore_no_copy?: string }',
    'method-args': 'Record<string, unknown>',
    'bulk-docs':
      row.operation === 'bulkInsert'
        ? `{ docs: Partial<${doc}>[] }`
        : `{ docs: (Partial<${doc}> & { name: string | number })[] }`,
    'bulk-names': '{ names: (string | number)[] }',
  };
  const response: Record<RouteRow['response'], string> = {
    document: `{ data: ${doc} }`,
    documents:
      version === 2
        ? `{ data: ${doc}[]; has_next_page: boolean; count?: number; next_cursor?: string | null }`
        : `{ data: ${doc}[] }`,
    count: '{ data: number }',
    meta: '{ data: DocTypeMeta }',
    ok: "{ data: 'ok' }",
    'method-result': version === 2 ? `{ data?: unknown; docs?: ${doc}[] }` : '{ data?: unknown }',
    openapi: 'Record<string, unknown>',
    file: 'Uint8Array',
    'bulk-result':
      row.operation === 'bulkUpdate'
        ? `{ data: BulkResult; docs: Partial<${doc}>[] }`
        : '{ data: BulkResult }',
    job: '{ data: Record<string, unknown> }',
    export: 'Uint8Array',
  };
  const input = request[row.request];
  const where =
    row.request === 'document' ||
    row.request === 'bulk-docs' ||
    row.request === 'bulk-names' ||
    (row.request === 'method-args' && row.verbs !== '*' && !row.verbs.includes('GET'))
      ? 'body'
      : 'query';
  return `{ ${input ? `${where}: ${input}; ` : ''}response: ${response[row.response]} }`;
}

/** The verbs and path of a row for a DocType, as a reader of its route module sees them. */
function routeLine(row: RouteRow, ir: DocTypeIR): string {
  return `${row.verbs === '*' ? '*' : row.verbs.join(', ')} ${docTypePath(row, ir)}`;
}

/** Whether a row's body carries documents of the DocType, which its generated validator checks. */
const takesDocuments = (row: RouteRow) => row.request === 'document' || row.request === 'bulk-docs';

/**
 * Emits one route module: the routes the DocType serves in one API version (the route table's rows, by key, with its
 * validator where the body carries documents), which the runtime dispatches its requests to, and their request and
 * response types in terms of the DocType's generated interface.
 */
export function emitRoutes(ir: DocTypeIR, _ctx: GeneratorContext, version: 1 | 2): string {
  const kind = docTypeKind(ir.meta);
  const rows = docTypeRows(kind, version);
  const doc = className(ir.meta.name);
  const validates = rows.some(takesDocuments);
  const entries = rows.map(
    (row) =>
      `  /** ${routeLine(row, ir)} */\n` +
      `  ${docTypeRouteKey(row)}: { row: row.${docTypeRouteKey(row)}${takesDocuments(row) ? ', validate: validateBody' : ''} },\n`,
  );
  const types = rows.map((row) => ({ name: docTypeRouteKey(row), type: routeType(row, doc, version) }));
  return (
    header('generator/emit/routes.ts', ir.loaded.file) +
    (rows.length
      ? importLine(['DOCTYPE_ROWS', ...(validates ? ['lazyValidator'] : [])], RUNTIME_INTERNAL)
      : '') +
    importLine(
      [
        'DocTypeMeta',
        'DocTypeRoutes',
        ...(rows.some((r) => r.response === 'bulk-result') ? ['BulkResult'] : []),
      ],
      RUNTIME_INTERNAL,
      true,
    ) +
    importLine([doc], `../../${modelPath(ir).replace(/\.ts$/, '')}`, true) +
    (validates
      ? `const validateBody = ${lazyValidatorCall(`../../${validatorPath(ir).replace(/\.ts$/, '')}`)};\n`
      : '') +
    (rows.length ? `const row = DOCTYPE_ROWS.v${version};\n` : '') +
    `/**\n * The REST v${version} routes of ${ir.meta.name}, by key: the route table's row each serves${version === 1 ? ' (under /api and /api/v1)' : ''}, and\n` +
    ` * the validator of a body of documents. The runtime dispatches the DocType's requests to these; a route left out\n` +
    ` * answers as an operation the DocType does not have.\n */\n` +
    `export const routes: DocTypeRoutes<Routes> = {${entries.length ? `\n${entries.join('')}` : ''}};\n` +
    '\n' +
    interfaceText('Routes', types, {
      docs: `Request and success response of each REST v${version} route of ${ir.meta.name}, by key.`,
    })
  );
}
