// Emits generated/methods/<slug>.ts: an ajv standalone validator per whitelisted method and the DocType's method table.
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { GeneratorContext } from '../context';
import type { MethodIR } from '../methods/extract-methods';
import type { DocTypeIR } from '../normalize';
import { restyleAjvCode } from '../ts/ajv-style';
import { header } from '../ts/header';
import { quote, tsLiteral } from '../ts/literal';
import { AJV_OPTIONS } from './validator';

/** Path of a DocType's method module inside the output folder. */
export const methodsPath = (ir: DocTypeIR) => `methods/${ir.meta.slug}.ts`;

/** The exported name of a method's validator (kinds are separate namespaces, so the kind is part of it). */
const validatorName = (m: MethodIR) => `${m.kind}_${m.name}`;

/** Emits the method module of one DocType (only called for DocTypes with whitelisted methods). */
export function emitMethods(ir: DocTypeIR, ctx: GeneratorContext): string {
  const methods = ctx.methods.get(ir.meta.name) ?? [];
  const ajv = new Ajv({
    ...AJV_OPTIONS,
    meta: false,
    validateSchema: false,
    code: { source: true, esm: true, lines: true },
  });
  for (const m of methods) ajv.addSchema({ $id: validatorName(m), ...m.schema });
  const code = standaloneCode(
    ajv,
    Object.fromEntries(methods.map((m) => [validatorName(m), validatorName(m)])),
  ).replace(/^"use strict";\n?/, '');
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
    restyleAjvCode(code.endsWith('\n') ? code : `${code}\n`),
    `\n/** The whitelisted methods of ${ir.meta.name}: argument validators (coerce and strip in place) by kind and name. */\n`,
    // Declared, not inferred: under @ts-nocheck `kind: 'function'` would widen to string, which MethodEntry refuses.
    `export const methods: readonly MethodEntry[] = [\n${table}];\n`,
  ].join('');
}
