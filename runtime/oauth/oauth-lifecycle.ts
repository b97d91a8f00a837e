// What OAuth adds to the document lifecycle: disabling a User revokes its tokens, deleting an OAuth Client its tokens
// and codes, in the same transaction.
import type { Site } from '../site';
import { OAUTH_CLIENT, revokeClientGrants, revokeUserTokens } from './document-revocation';

/** The DocType of the tokens revoked (the token cache is dropped after a transaction that wrote it). */
const BEARER_TOKEN = 'OAuth Bearer Token';

/** Registers the revocations, when the site has OAuth tokens. */
export function registerOAuth(site: Site): void {
  const { lifecycle: extensions, registry } = site;
  if (!registry.get(BEARER_TOKEN)) return;
  // Enabling the user again does not revive the tokens.
  extensions.on(
    'afterWrite',
    (op) => {
      if (op.isNew || Number(op.data.enabled) !== 0) return undefined;
      op.tx.markWritten(BEARER_TOKEN);
      return revokeUserTokens(op.trx, String(op.data.name));
    },
    'User',
  );
  extensions.on(
    'afterDelete',
    (op) => {
      op.tx.markWritten(BEARER_TOKEN);
      return revokeClientGrants(op.trx, op.doc.name);
    },
    OAUTH_CLIENT,
  );
}
