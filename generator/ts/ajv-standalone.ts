// ajv standalone validator code for a set of schemas, in the generated files' style. Shared by the DocType and method
// validators and by the validator threads (validator-worker.ts), so it imports nothing but ajv.
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { restyleAjvCode } from './ajv-style';

/** A JSON Schema object, as ajv takes it. */
type Schema = Record<string, unknown>;

/** The ajv options the emitted code was compiled with (coercion and unknown-key removal happen in place). */
export const AJV_OPTIONS = {
  coerceTypes: true,
  removeAdditional: true,
  allErrors: true,
  strict: false,
} as const;

/**
 * Compiles `schemas` (by `$id`) and exports a validator function per entry of `exported` (export name → `$id`). One ajv
 * instance per call keeps each file's output independent of the others (ajv numbers functions per instance); without
 * the meta-schema an instance is cheap to build.
 */
export function ajvStandaloneCode(schemas: Record<string, Schema>, exported: Record<string, string>): string {
  const ajv = new Ajv({
    ...AJV_OPTIONS,
    meta: false,
    validateSchema: false,
    // ajv's optimisation passes (removing unused names, inlining constants) were half of compiling a validator and
    // shrink the code by 8 %; V8 does the same to it when it runs.
    code: { source: true, esm: true, lines: true, optimize: false },
  });
  for (const [id, schema] of Object.entries(schemas)) ajv.addSchema({ $id: id, ...schema });
  const code = standaloneCode(ajv, exported).replace(/^"use strict";\n?/, '');
  // The ajv output is opaque JavaScript: it is written in the generated files' style (restyleAjvCode), not re-parsed
  // by ts-morph (re-parsing megabytes of it dominated generation time for large DocType sets).
  return restyleAjvCode(code.endsWith('\n') ? code : `${code}\n`);
}
