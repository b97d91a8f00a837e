// Revocation that comes with a document change: deleting an OAuth Client (its tokens and codes), disabling a User or
// changing its password (its tokens and codes).
import type { Knex } from 'knex';
import { now } from '../db/stored-values';

/** The DocType whose deletion revokes grants. */
export const OAUTH_CLIENT = 'OAuth Client';

/** The Links to an OAuth Client whose rows its delete revokes: they do not stop the delete (runtime/back-links). */
export const CLIENT_GRANT_LINKS = [
  { doctype: 'OAuth Bearer Token', fieldname: 'client' },
  { doctype: 'OAuth Authorization Code', fieldname: 'client' },
] as const;

/**
 * Revokes every active token and spends every unspent code of `client`, inside the transaction that deletes it (both
 * commit or neither). The caller drops the bearer-token caches after the commit.
 */
export async function revokeClientGrants(trx: Knex, client: string): Promise<void> {
  const stamp = now();
  await trx('tabOAuth Bearer Token')
    .where({ client, status: 'Active' })
    .update({ status: 'Revoked', modified: stamp });
  await trx('tabOAuth Authorization Code')
    .where({ client, validity: 'Valid' })
    .update({ validity: 'Invalid', modified: stamp });
}

/**
 * Revokes every active token and spends every unspent code of `user`, inside the transaction that disables the user or
 * changes its password.
 */
export async function revokeUserTokens(trx: Knex, user: string): Promise<void> {
  const stamp = now();
  await trx('tabOAuth Bearer Token')
    .where({ user, status: 'Active' })
    .update({ status: 'Revoked', modified: stamp });
  await trx('tabOAuth Authorization Code')
    .where({ user, validity: 'Valid' })
    .update({ validity: 'Invalid', modified: stamp });
}
