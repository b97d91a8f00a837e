// What OAuth adds to the document lifecycle: who may write OAuth Client, token and code rows (grant-rows.ts), and
// revocation in the same transaction: disabling a User or a new password revokes its tokens, deleting an OAuth Client its tokens and codes.
import { setsNewPassword } from '../auth/auth-lifecycle';
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { OAUTH_CLIENT, revokeClientGrants, revokeUserTokens } from './document-revocation';
import { guardGrantRowWrite } from './grant-rows';

/** The DocType of the tokens revoked (the token cache is dropped after a transaction that wrote it). */
const BEARER_TOKEN = 'OAuth Bearer Token';

/** The DocTypes whose rows grant access (grant-rows.ts checks every write of them). */
const GRANT_DOCTYPES = [OAUTH_CLIENT, BEARER_TOKEN, 'OAuth Authorization Code'];

/** Registers the checks of grant rows, and the revocations when the site has OAuth tokens. */
export function registerOAuth(site: Site): void {
  const { registry } = site;
  const extensions = lifecycleOf(site);
  for (const doctype of GRANT_DOCTYPES)
    extensions.on(
      'beforeSave',
      ({ tx, doc, stored }) =>
        guardGrantRowWrite(tx.ignorePermissions ? undefined : tx.user, doctype, doc, stored),
      doctype,
    );
  if (!registry.get(BEARER_TOKEN)) return;
  // Disabling a user or giving it a new password revokes its tokens and spends its unspent codes, as its sessions end;
  // enabling the user again does not revive them.
  extensions.on(
    'afterWrite',
    (op) => {
      if (op.isNew || (Number(op.data.enabled) !== 0 && !setsNewPassword(op))) return undefined;
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
