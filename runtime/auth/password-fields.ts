// Password fields never stay in the document table: User passwords become scrypt hashes, API secrets digests, in `__Auth`.
import type { Knex } from 'knex';
import { fieldLists } from '../registry/field-lists';
import type { DocData } from '../db/row-store';
import type { DocTypeBinding } from '../registry/registry';
import { digestSecret, hashPassword, writeAuth } from './passwords';

const MASK = '*****';

/** True when a Password field's value is a secret to store (not empty, not the mask a read returns). */
export function isNewSecret(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !/^\*+$/.test(value);
}

/**
 * Moves Password values of `data` into `__Auth` and leaves a mask in the row. `new_password` of a User is
 * that user's login password; `api_secret` is kept as a digest so key sources can compare it.
 */
export async function storePasswordFields(trx: Knex, binding: DocTypeBinding, data: DocData): Promise<void> {
  for (const field of fieldLists(binding.meta).passwords) {
    const value = data[field.fieldname];
    if (!isNewSecret(value)) continue;
    const name = String(data.name);
    if (binding.meta.name === 'User' && field.fieldname === 'new_password') {
      await writeAuth(trx, 'User', name, 'password', await hashPassword(value));
      data[field.fieldname] = '';
    } else if (field.fieldname === 'api_secret') {
      await writeAuth(trx, binding.meta.name, name, field.fieldname, digestSecret(value).toString('hex'));
      data[field.fieldname] = MASK;
    } else {
      await writeAuth(trx, binding.meta.name, name, field.fieldname, await hashPassword(value));
      data[field.fieldname] = MASK;
    }
  }
}
