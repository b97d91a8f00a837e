// The compiled code of a DocType's body validator, apart from validator.ts so that a validator thread loads ajv alone.
import { ajvStandaloneCode } from '../ts/ajv-standalone';

/**
 * The validator code of one DocType's body schema. Create and update bodies have the same schema (neither requires
 * fields: mandatory fields are checked after defaults and hooks, as in Frappe), so one compiled function,
 * `validateBody`, serves both.
 */
export function validatorCode(schema: Record<string, unknown>): string {
  return ajvStandaloneCode({ body: schema }, { validateBody: 'body' });
}
