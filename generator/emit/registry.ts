// Emits generated/index.ts: the registry of every DocType (metadata, model, validators, routes, controller), as text in
// the layout ts-morph's structure printer gave it (a run without controllers then never loads ts-morph).
import { RUNTIME_INTERNAL, importFromOut, type GeneratorContext } from '../context';
import { className, moduleIdentifier } from '../naming';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { importLine, jsDoc } from '../ts/declarations';
import { quote } from '../ts/literal';
import { methodsPath } from './methods';
import { modelPath } from './model';
import { routesPath } from './routes';
import { lazyValidatorCall, validatorPath } from './validator';

const ident = (ir: DocTypeIR) => moduleIdentifier(ir.meta.name);
const spec = (rel: string) => `./${rel.replace(/\.ts$/, '')}`;

/** `import * as name from 'module';` */
const importAll = (name: string, from: string) => `import * as ${name} from ${quote(from)};\n`;

/** Emits the registry module. */
export function emitRegistry(ctx: GeneratorContext): string {
  const imports: string[] = [importLine(['createRegistry', 'lazyValidator'], RUNTIME_INTERNAL)];
  const entries: string[] = [];
  for (const ir of ctx.doctypes) {
    const id = ident(ir);
    imports.push(
      importAll(`${id}_model`, spec(modelPath(ir))),
      importAll(`${id}_v1`, spec(routesPath(ir, 1))),
      importAll(`${id}_v2`, spec(routesPath(ir, 2))),
    );
    const hasMethods = ctx.methods.has(ir.meta.name);
    if (hasMethods) imports.push(importAll(`${id}_methods`, spec(methodsPath(ir))));
    if (ir.loaded.controller)
      imports.push(importAll(`${id}_controller`, importFromOut(ctx, 'index.ts', ir.loaded.controller)));
    entries.push(
      `  { meta: ${id}_model.meta, model: ${id}_model.${className(ir.meta.name)}Model, ` +
        `validateBody: ${lazyValidatorCall(spec(validatorPath(ir)))}, ` +
        `v1: ${id}_v1.routes, v2: ${id}_v2.routes` +
        (ir.loaded.controller ? `, controller: ${id}_controller` : '') +
        (hasMethods ? `, methods: ${id}_methods.methods` : '') +
        ' }',
    );
  }
  // The closing `]);` sits two columns in, where ts-morph's hanging indent of a multi-line initializer put it.
  return (
    header('generator/emit/registry.ts', 'every DocType file') +
    imports.join('') +
    jsDoc('Every DocType of this service, by name.') +
    `export const registry = createRegistry([\n${entries.join(',\n')}\n  ]);\n`
  );
}
