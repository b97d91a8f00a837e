// Emits generated/validators/<slug>.ts: ajv standalone validators for create and update bodies.
import type { DocTypeMeta } from '../../runtime/meta/types';
import type { GeneratorContext } from '../context';
import { bodyFields, fieldSchema, type JsonSchema } from '../json-schema';
import type { DocTypeIR } from '../normalize';
import { header } from '../ts/header';
import { quote } from '../ts/literal';
import { validatorCode } from './validator-code';

/** Path of a DocType's validator module inside the output folder. */
export const validatorPath = (ir: DocTypeIR) => `validators/${ir.meta.slug}.ts`;

/**
 * The validator of the module `from` (a specifier without extension), required at its first call
 * (runtime/registry/lazy-validator.ts): a start loads no validator module.
 */
export const lazyValidatorCall = (from: string) =>
  `lazyValidator(() => require(${quote(from)}) as typeof import(${quote(from)}))`;

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

/** The validator module of one DocType around its compiled code (validatorCode, here or on a validator thread). */
export function validatorModule(ir: DocTypeIR, code: string): string {
  return [
    header('generator/emit/validator.ts', ir.loaded.file),
    '// @ts-nocheck: ajv standalone output is plain JavaScript.\n',
    code,
  ].join('');
}

/** Emits the validator module of one DocType on this thread (emitAll compiles the code on validator threads). */
export function emitValidator(ir: DocTypeIR, ctx: GeneratorContext): string {
  return validatorModule(ir, validatorCode(bodySchema(ir, ctx)));
}
