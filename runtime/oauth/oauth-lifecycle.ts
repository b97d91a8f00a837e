// What OAuth adds to the document lifecycle: who may write OAuth Client, token and code rows (grant-rows.ts), and
// revocation in the same transaction: disabling a User revokes its tokens, deleting an OAuth Client its tokens and codes.
import type { Site } from '../site';
import { OAUTH_CLIENT, revokeClientGrants, revokeUserTokens } from './document-revocation';
import { guardGrantRowWrite } from './grant-rows';

/** The DocType of the tokens revoked (the token cache is dropped after a transaction that wrote it). */
const BEARER_TOKEN = 'OAuth Bearer Token';

/** The DocTypes whose rows grant access (grant-rows.ts checks every write of them). */
const GRANT_DOCTYPES = [OAUTH_CLIENT, BEARER_TOKEN, 'OAuth Authorization Code'];

/** Registers the checks of grant rows, and the revocations when the site has OAuth tokens. */
export function registerOAuth(site: Site): void {
  const { lifecycle: extensions, registry } = site;
  for (const doctype of GRANT_DOCTYPES)
    extensions.on(
      'beforeSave',
      ({ tx, doc, stored }) =>
        guardGrantRowWrite(tx.ignorePermissions ? undefined : tx.user, doctype, doc, stored),
      doctype,
    );
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
