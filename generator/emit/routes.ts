// Emits generated/routes/v1/<slug>.ts and generated/routes/v2/<slug>.ts: the operations each DocType answers.
import { StructureKind, VariableDeclarationKind } from 'ts-morph';
import { RUNTIME_INTERNAL, type GeneratorContext } from '../context';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { printSourceFile } from '../ts/project';

/** Path of a DocType's route module for an API version. */
export const routesPath = (ir: DocTypeIR, version: 1 | 2) => `routes/v${version}/${ir.meta.slug}.ts`;

/** The v1 operations of a DocType: child tables have none of their own, singles have get and update. */
export function v1Operations(ir: DocTypeIR): string[] {
  if (ir.meta.istable || ir.meta.isVirtual) return [];
  if (ir.meta.issingle) return ['get', 'update'];
  return ['list', 'create', 'get', 'update', 'delete'];
}

/** The v2 operations of a DocType (meta answers for every DocType). */
export function v2Operations(ir: DocTypeIR): string[] {
  if (ir.meta.istable || ir.meta.isVirtual) return ['meta'];
  if (ir.meta.issingle) return ['get', 'update', 'meta'];
  return ['list', 'create', 'get', 'update', 'delete', 'copy', 'count', 'meta'];
}

/** Emits one route module: the DocType's operation list for one API version, typed by the runtime. */
export function emitRoutes(ir: DocTypeIR, _ctx: GeneratorContext, version: 1 | 2): string {
  const ops = version === 1 ? v1Operations(ir) : v2Operations(ir);
  const type = version === 1 ? 'V1Operation' : 'V2Operation';
  return printSourceFile(header('generator/emit/routes.ts', ir.loaded.file), {
    statements: [
      { kind: StructureKind.ImportDeclaration, moduleSpecifier: RUNTIME_INTERNAL, namedImports: [type], isTypeOnly: true },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [`The REST v${version} operations of ${ir.meta.name}.`],
        declarations: [{ name: 'operations', type: `readonly ${type}[]`, initializer: JSON.stringify(ops) }],
      },
    ],
  });
}
