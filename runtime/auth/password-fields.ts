// Password fields never stay in the document table, a child row's included: User passwords become scrypt hashes, API
// secrets digests, in `__Auth`.
import type { Knex } from 'knex';
import { fieldLists, tableFields } from '../registry/field-lists';
import type { DocData, Queryable } from '../db/row-store';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { deleteAuth, digestSecret, hashPassword, writeAuth } from './passwords';

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

/** The child tables of `binding` whose rows have Password fields. */
export function secretTables(binding: DocTypeBinding, registry: Registry): ReturnType<typeof tableFields> {
  return tableFields(binding.meta, registry).filter(
    ({ child }) => fieldLists(child.meta).passwords.length > 0,
  );
}

/**
 * Moves the Password values of `data`'s child rows into `__Auth` (each under the child DocType and the row's name),
 * leaving a mask in the row, and deletes the stored secrets of rows the save removes (`stored`: the document before).
 */
export async function storeChildPasswordFields(
  trx: Knex,
  tables: ReturnType<typeof tableFields>,
  data: DocData,
  stored: DocData | undefined,
): Promise<void> {
  for (const { field, child } of tables) {
    const rows = data[field.fieldname] as DocData[] | undefined;
    if (rows === undefined) continue;
    for (const row of rows) await storePasswordFields(trx, child, row);
    const kept = new Set(rows.map((row) => String(row.name)));
    for (const row of (stored?.[field.fieldname] as DocData[] | undefined) ?? [])
      if (!kept.has(String(row.name))) await deleteAuth(trx, child.meta.name, String(row.name));
  }
}

/** Deletes the stored secrets of a deleted document's child rows (`stored`: the document as it was). */
export async function deleteChildAuth(
  q: Queryable,
  tables: ReturnType<typeof tableFields>,
  stored: DocData,
): Promise<void> {
  for (const { field, child } of tables)
    for (const row of (stored[field.fieldname] as DocData[] | undefined) ?? [])
      await deleteAuth(q, child.meta.name, String(row.name));
}
