// Rows the service writes for itself (a Patch Log entry, a webhook attempt's log row): straight to the DocType's table,
// not through the lifecycle, so no hooks, checks, events or versions run for them and they can be written before the
// tables the lifecycle reads exist.
import type { Knex } from 'knex';
import type { DocData } from '../db/row-store';
import { now } from '../db/stored-values';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { fillStoredValues } from './checks';

/** The standard columns of a row `user` makes now: owner, modified_by, creation, modified; a draft at idx 0. */
export function serviceStamps(user: string): DocData {
  const stamp = now();
  return { owner: user, modified_by: user, creation: stamp, modified: stamp, docstatus: 0, idx: 0 };
}

/**
 * Inserts `values` as the row `name` of `binding` in the write transaction `trx`, stamped as made now by `user`
 * (serviceStamps); every other stored field gets its column's empty value.
 */
export async function insertServiceRow(
  site: Site,
  trx: Knex,
  binding: DocTypeBinding,
  name: string,
  values: object,
  user: string,
): Promise<void> {
  const data: DocData = { ...values, name, ...serviceStamps(user) };
  fillStoredValues(binding.meta, data);
  await site.rows.insert(trx, binding, data);
}
