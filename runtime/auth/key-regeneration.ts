// Regenerating a user's API keys (the generate_keys method and `svc generate-keys`): the new secret is stored in one
// transaction, then every process is told, so the old secret stops working and the new one works everywhere at once.
import type { Site } from '../site';
import { regenerateKeys } from './api-keys';
import { authChanged } from './auth-broadcast';

/** New API keys for `user` (the key stays when it has one); undefined when there is no such user. */
export async function regenerateUserKeys(
  site: Site,
  user: string,
): Promise<{ api_key: string; api_secret: string } | undefined> {
  const keys = await site.db.knex.transaction((trx) => regenerateKeys(trx, user));
  if (keys) await authChanged(site);
  return keys;
}
