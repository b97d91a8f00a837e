// Writes of OAuth rows through the document API: who may bind a client, token or code to a user, and token digests.
// A System Manager holds every right on these DocTypes, so without this a client or token row naming Administrator
// would let it act as Administrator (issue #36 item 1).
import { PermissionError } from '../errors/errors';
import type { SessionUser } from '../site';
import type { DocData } from '../db/row-store';
import { tokenDigest } from '../auth/bearer-tokens';
import { mayActAs } from '../auth/users';

/** The fields of a grant row that hold a secret (stored as its SHA-256 digest), per DocType. */
const SECRET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'OAuth Bearer Token': ['access_token', 'refresh_token'],
  'OAuth Authorization Code': ['authorization_code'],
};

/** The status field of a grant row and the values that leave it unusable (a write may always set those). */
const REVOCATION: Readonly<Record<string, { field: string; dead: readonly string[] }>> = {
  'OAuth Bearer Token': { field: 'status', dead: ['Revoked'] },
  'OAuth Authorization Code': { field: 'validity', dead: ['Invalid', 'Revoked'] },
};

/** The user an OAuth Client's tokens act as: a Client Credentials client's `user`; none for other grants. */
export function clientActsAs(row: DocData | undefined): string | undefined {
  return row?.grant_type === 'Client Credentials' && row.user ? String(row.user) : undefined;
}

function text(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/**
 * Checks (and prepares) a write of an OAuth Client, Bearer Token or Authorization Code row before it is named and
 * stored; other DocTypes pass untouched. `actor` is the writing user, undefined for the service's own writes.
 * - A client acting as a user is created or changed only by that user or Administrator.
 * - A token or code row naming another user may only be revoked: setting its user or secret, or reviving it, is 403.
 * - A token value written through the API is stored as its digest (CONTRACT section 7: the plain value authenticates).
 */
export function guardGrantRowWrite(
  actor: SessionUser | undefined,
  doctype: string,
  doc: DocData,
  stored: DocData | undefined,
): void {
  if (doctype === 'OAuth Client') {
    if (actor) checkClientWrite(actor.name, doc, stored);
    return;
  }
  const secrets = SECRET_FIELDS[doctype];
  if (!secrets) return;
  const changed = secrets.filter((field) => text(doc[field]) !== text(stored?.[field]));
  if (actor) checkGrantWrite(actor.name, doctype, doc, stored, changed);
  if (doctype === 'OAuth Bearer Token')
    for (const field of changed) if (text(doc[field])) doc[field] = tokenDigest(text(doc[field]));
}

function checkClientWrite(actor: string, doc: DocData, stored: DocData | undefined): void {
  for (const user of [clientActsAs(doc), clientActsAs(stored)])
    if (user !== undefined && !mayActAs(actor, user))
      throw new PermissionError(
        `Only ${user} or Administrator may create or change an OAuth Client that acts as ${user}`,
      );
}

function checkGrantWrite(
  actor: string,
  doctype: string,
  doc: DocData,
  stored: DocData | undefined,
  changedSecrets: readonly string[],
): void {
  const user = text(doc.user);
  const storedUser = text(stored?.user);
  const { field, dead } = REVOCATION[doctype] as { field: string; dead: readonly string[] };
  const revived =
    stored !== undefined && dead.includes(text(stored[field])) && !dead.includes(text(doc[field]));
  const binds = stored === undefined || user !== storedUser || changedSecrets.length > 0 || revived;
  if (binds && user && !mayActAs(actor, user))
    throw new PermissionError(`Only ${user} or Administrator may issue or change a ${doctype} of ${user}`);
}
