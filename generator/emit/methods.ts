// Emits generated/methods/<slug>.ts: an ajv standalone validator per whitelisted method and the DocType's method table.
import type { GeneratorContext } from '../context';
import type { MethodIR } from '../methods/extract-methods';
import type { DocTypeIR } from '../normalize';
import { ajvStandaloneCode } from '../ts/ajv-standalone';
import { header } from '../ts/header';
import { quote, tsLiteral } from '../ts/literal';

/** Path of a DocType's method module inside the output folder. */
export const methodsPath = (ir: DocTypeIR) => `methods/${ir.meta.slug}.ts`;

/** The exported name of a method's validator (kinds are separate namespaces, so the kind is part of it). */
const validatorName = (m: MethodIR) => `${m.kind}_${m.name}`;

/** Emits the method module of one DocType (only called for DocTypes with whitelisted methods). */
export function emitMethods(ir: DocTypeIR, ctx: GeneratorContext): string {
  const methods = ctx.methods.get(ir.meta.name) ?? [];
  const code = ajvStandaloneCode(
    Object.fromEntries(methods.map((m) => [validatorName(m), m.schema])),
    Object.fromEntries(methods.map((m) => [validatorName(m), validatorName(m)])),
  );
  const table = methods
    .map(
      (m) =>
        `  { kind: ${quote(m.kind)}, name: ${quote(m.name)}, path: ${quote(m.path)}, validate: ${validatorName(m)}, jsonArgs: ${tsLiteral(m.jsonArgs)} },\n`,
    )
    .join('');
  return [
    header('generator/emit/methods.ts', ir.loaded.file),
    '// @ts-nocheck: ajv standalone output is plain JavaScript.\n',
    "import type { MethodEntry } from 'doctype-service/internal';\n",
    code,
    `\n/** The whitelisted methods of ${ir.meta.name}: argument validators (coerce and strip in place) by kind and name. */\n`,
    // Declared, not inferred: under @ts-nocheck `kind: 'function'` would widen to string, which MethodEntry refuses.
    `export const methods: readonly MethodEntry[] = [\n${table}];\n`,
  ].join('');
}
