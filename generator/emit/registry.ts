// Emits generated/index.ts: the registry of every DocType (metadata, model, validators, routes, controller).
import { StructureKind, VariableDeclarationKind, type ImportDeclarationStructure } from 'ts-morph';
import { RUNTIME_INTERNAL, importFromOut, type GeneratorContext } from '../context';
import { className, moduleIdentifier } from '../naming';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { printSourceFile } from '../ts/project';
import { methodsPath } from './methods';
import { modelPath } from './model';
import { routesPath } from './routes';
import { validatorPath } from './validator';

const ident = (ir: DocTypeIR) => moduleIdentifier(ir.meta.name);
const spec = (rel: string) => `./${rel.replace(/\.ts$/, '')}`;

/** Emits the registry module. */
export function emitRegistry(ctx: GeneratorContext): string {
  const imports: ImportDeclarationStructure[] = [
    {
      kind: StructureKind.ImportDeclaration,
      moduleSpecifier: RUNTIME_INTERNAL,
      namedImports: ['createRegistry'],
    },
  ];
  const entries: string[] = [];
  for (const ir of ctx.doctypes) {
    const id = ident(ir);
    imports.push(
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: spec(modelPath(ir)),
        namespaceImport: `${id}_model`,
      },
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: spec(validatorPath(ir)),
        namespaceImport: `${id}_validators`,
      },
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: spec(routesPath(ir, 1)),
        namespaceImport: `${id}_v1`,
      },
      {
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: spec(routesPath(ir, 2)),
        namespaceImport: `${id}_v2`,
      },
    );
    const hasMethods = ctx.methods.has(ir.meta.name);
    if (hasMethods) {
      imports.push({
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: spec(methodsPath(ir)),
        namespaceImport: `${id}_methods`,
      });
    }
    if (ir.loaded.controller) {
      imports.push({
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: importFromOut(ctx, 'index.ts', ir.loaded.controller),
        namespaceImport: `${id}_controller`,
      });
    }
    entries.push(
      `{ meta: ${id}_model.meta, model: ${id}_model.${className(ir.meta.name)}Model, ` +
        `validateBody: ${id}_validators.validateBody, ` +
        `v1: ${id}_v1.routes, v2: ${id}_v2.routes` +
        (ir.loaded.controller ? `, controller: ${id}_controller` : '') +
        (hasMethods ? `, methods: ${id}_methods.methods` : '') +
        ' }',
    );
  }
  return printSourceFile(header('generator/emit/registry.ts', 'every DocType file'), {
    statements: [
      ...imports,
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: ['Every DocType of this service, by name.'],
        declarations: [{ name: 'registry', initializer: `createRegistry([\n${entries.join(',\n')}\n])` }],
      },
    ],
  });
}
