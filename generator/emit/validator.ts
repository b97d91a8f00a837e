// Emits generated/validators/<slug>.ts: ajv standalone validators for create and update bodies.
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { DocTypeMeta } from '../../runtime/meta/types';
import type { GeneratorContext } from '../context';
import { bodyFields, fieldSchema, type JsonSchema } from '../json-schema';
import type { DocTypeIR } from '../normalize';
import { restyleAjvCode } from '../ts/ajv-style';
import { header } from '../ts/header';

/** Path of a DocType's validator module inside the output folder. */
export const validatorPath = (ir: DocTypeIR) => `validators/${ir.meta.slug}.ts`;

/** The ajv options the emitted code was compiled with (coercion and unknown-key removal happen in place). */
export const AJV_OPTIONS = {
  coerceTypes: true,
  removeAdditional: true,
  allErrors: true,
  strict: false,
} as const;

function rowSchema(child: DocTypeMeta, ctx: GeneratorContext): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: ['string', 'null'], maxLength: 140 },
      idx: { type: ['integer', 'null'] },
      ...Object.fromEntries(
        bodyFields(child).map((f) => [f.fieldname, fieldSchema(f, ctx, () => ({ type: 'object' }))]),
      ),
    },
  };
}

/** The request-body schema of a DocType: its fields plus the standard fields a client may send. */
export function bodySchema(ir: DocTypeIR, ctx: GeneratorContext): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: ['string', 'null'], maxLength: 140 },
      modified: { type: 'string' },
      docstatus: { type: 'integer', enum: [0, 1, 2] },
      ...Object.fromEntries(
        bodyFields(ir.meta).map((f) => [f.fieldname, fieldSchema(f, ctx, (child) => rowSchema(child, ctx))]),
      ),
    },
  };
}

/**
 * Emits the validator module of one DocType. Create and update bodies have the same schema (neither requires
 * fields: mandatory fields are checked after defaults and hooks, as in Frappe), so one compiled function,
 * `validateBody`, serves both.
 */
export function emitValidator(ir: DocTypeIR, ctx: GeneratorContext): string {
  // One instance per DocType keeps each file's output independent of the others (ajv numbers functions per
  // instance); without the meta-schema an instance is cheap to build.
  const ajv = new Ajv({
    ...AJV_OPTIONS,
    meta: false,
    validateSchema: false,
    code: { source: true, esm: true, lines: true },
  });
  ajv.addSchema({ $id: 'body', ...bodySchema(ir, ctx) });
  const code = standaloneCode(ajv, { validateBody: 'body' }).replace(/^"use strict";\n?/, '');
  // The ajv output is opaque JavaScript: it is written after the header in the generated files' style
  // (restyleAjvCode), not re-parsed by ts-morph (re-parsing megabytes of it dominated generation time for large
  // DocType sets).
  return [
    header('generator/emit/validator.ts', ir.loaded.file),
    '// @ts-nocheck: ajv standalone output is plain JavaScript.\n',
    restyleAjvCode(code.endsWith('\n') ? code : `${code}\n`),
  ].join('');
}
