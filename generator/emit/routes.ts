// Emits generated/routes/v1/<slug>.ts and generated/routes/v2/<slug>.ts: what a DocType serves, read from the route
// table (runtime/routes/route-table.ts): its operations, its concrete routes, and each route's request and response
// typed by the DocType's generated interface.
import { StructureKind, VariableDeclarationKind, type InterfaceDeclarationStructure } from 'ts-morph';
import { docTypeKind, docTypeOperations, docTypeRows, type RouteRow } from '../../runtime/routes/route-table';
import { RUNTIME_INTERNAL, type GeneratorContext } from '../context';
import { className } from '../naming';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { tsLiteral } from '../ts/literal';
import { printSourceFile } from '../ts/project';
import { modelPath } from './model';

/** Path of a DocType's route module for an API version. */
export const routesPath = (ir: DocTypeIR, version: 1 | 2) => `routes/v${version}/${ir.meta.slug}.ts`;

/** The v1 operations of a DocType: child tables have none of their own, singles have get and update. */
export const v1Operations = (ir: DocTypeIR): string[] => docTypeOperations(docTypeKind(ir.meta), 1);

/** The v2 operations of a DocType (meta answers for every DocType). */
export const v2Operations = (ir: DocTypeIR): string[] => docTypeOperations(docTypeKind(ir.meta), 2);

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

/** Emits one route module: the DocType's operations, routes and their typed request/response for one API version. */
export function emitRoutes(ir: DocTypeIR, _ctx: GeneratorContext, version: 1 | 2): string {
  const kind = docTypeKind(ir.meta);
  const ops = docTypeOperations(kind, version);
  const rows = docTypeRows(kind, version);
  const type = version === 1 ? 'V1Operation' : 'V2Operation';
  const doc = className(ir.meta.name);
  const routes = rows.map((row) => ({
    verbs: row.verbs,
    path: docTypePath(row, ir),
    operation: row.operation,
    status: row.status,
  }));
  const types: InterfaceDeclarationStructure = {
    kind: StructureKind.Interface,
    name: 'Routes',
    isExported: true,
    docs: [`Request and success response of each REST v${version} route of ${ir.meta.name}, by operation.`],
    properties: rows.map((row) => ({
      name: row.doctypeOperation ?? row.operation,
      type: routeType(row, doc, version),
    })),
  };
  return printSourceFile(header('generator/emit/routes.ts', ir.loaded.file), {
    statements: [
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: RUNTIME_INTERNAL,
        namedImports: [
          'DocTypeMeta',
          type,
          ...(rows.some((r) => r.response === 'bulk-result') ? ['BulkResult'] : []),
        ],
        isTypeOnly: true,
      },
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: `../../${modelPath(ir).replace(/\.ts$/, '')}`,
        namedImports: [doc],
        isTypeOnly: true,
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [`The REST v${version} operations of ${ir.meta.name}.`],
        declarations: [{ name: 'operations', type: `readonly ${type}[]`, initializer: tsLiteral(ops) }],
      },
      // Text, not a structure: ts-morph indents a multi-line initializer once more than the literal printer does.
      `/** The REST v${version} routes of ${ir.meta.name}, from the route table: verbs, path, operation, success status. */\n` +
        `export const routes = ${tsLiteral(routes)} as const;\n`,
      types,
    ],
  });
}
