// Amending a cancelled document: the new document names the original in `amended_from` and is named `<orig>-1`,
// or `<base>-<n+1>` when the original was itself an amendment `<base>-<n>` (Frappe's _get_amended_name).
import type { Knex } from 'knex';
import { DoesNotExistError, ValidationError } from '../errors/errors';
import type { DocTypeBinding } from '../registry/registry';

/** The name of an amendment of `amendedFrom`; refuses when the original is missing or not cancelled. */
export async function amendedName(trx: Knex, binding: DocTypeBinding, amendedFrom: string): Promise<string> {
  const { meta } = binding;
  if (!meta.isSubmittable)
    throw new ValidationError(`${meta.name} is not submittable: nothing can be amended`);
  const original = (await trx(meta.tableName)
    .where('name', amendedFrom)
    .first('name', 'docstatus', 'amended_from')) as
    { name: string; docstatus: number | string; amended_from?: string | null } | undefined;
  if (!original) throw new DoesNotExistError(`${meta.name} ${amendedFrom.slice(0, 140)} not found`);
  if (Number(original.docstatus) !== 2)
    throw new ValidationError(`${meta.name} ${amendedFrom} cannot be amended because it is not cancelled`);
  const parts = amendedFrom.split('-');
  const last = Number(parts[parts.length - 1]);
  if (original.amended_from && parts.length > 1 && Number.isInteger(last))
    return `${parts.slice(0, -1).join('-')}-${last + 1}`;
  return `${amendedFrom}-1`;
}
