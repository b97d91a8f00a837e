// The emit phase: every emitter over every DocType, collected into one file map (pure, no disk access).
import type { GeneratorContext } from '../context';
import type { JsonSchema } from '../json-schema';
import type { ValidatorCodeCache } from '../validator-cache';
import type { FileMap } from '../write/file-map';
import { emitClient } from './client';
import { DOCTYPE_SOURCES_PATH, emitDocTypeSources } from './doctype-sources';
import { emitMethods, methodsPath } from './methods';
import { emitModel, modelPath } from './model';
import { emitOpenApi } from './openapi';
import { emitRegistry } from './registry';
import { emitRoutes, routesPath } from './routes';
import { SCHEMA_DIAGRAM_PATH, emitSchemaDiagram } from './schema-diagram';
import { bodySchema, validatorModule, validatorPath } from './validator';
import { compileValidators } from './validator-threads';

/**
 * Runs all emitters; the result is sorted by path so it never depends on emit order. The validators' code comes from
 * `cache` when it holds the schema's, else compiles on worker threads (compileValidators) while this thread emits the
 * other files.
 */
export async function emitAll(ctx: GeneratorContext, cache?: ValidatorCodeCache): Promise<FileMap> {
  const schemas = ctx.doctypes.map((ir) => bodySchema(ir, ctx));
  const known = schemas.map((schema) => cache?.get(schema));
  const missing = schemas.flatMap((_, i) => (known[i] === undefined ? [i] : []));
  const validators = compileValidators(missing.map((i) => schemas[i] as JsonSchema));
  const files: FileMap = new Map();
  for (const ir of ctx.doctypes) {
    files.set(modelPath(ir), emitModel(ir, ctx));
    files.set(routesPath(ir, 1), emitRoutes(ir, ctx, 1));
    files.set(routesPath(ir, 2), emitRoutes(ir, ctx, 2));
    if (ctx.methods.has(ir.meta.name)) files.set(methodsPath(ir), emitMethods(ir, ctx));
  }
  files.set('index.ts', emitRegistry(ctx));
  for (const [path, text] of emitOpenApi(ctx)) files.set(path, text);
  for (const [path, text] of emitClient(ctx)) files.set(path, text);
  files.set(SCHEMA_DIAGRAM_PATH, emitSchemaDiagram(ctx));
  files.set(DOCTYPE_SOURCES_PATH, emitDocTypeSources(ctx));
  const { codes } = await validators.finish();
  missing.forEach((i, k) => {
    known[i] = codes[k] as string;
    cache?.put(schemas[i] as JsonSchema, codes[k] as string);
  });
  ctx.doctypes.forEach((ir, i) => files.set(validatorPath(ir), validatorModule(ir, known[i] as string)));
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}
