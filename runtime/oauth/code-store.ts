// Authorization codes as `OAuth Authorization Code` rows: only the code's digest is stored, and a code is spent once.
import { tokenDigest } from '../auth/bearer-tokens';
import { parseScopes } from '../auth/scopes';
import { mayActAs } from '../auth/users';
import { now } from '../db/stored-values';
import type { Site } from '../site';
import { datetimeOf, parseStoredDatetime } from './token-store';

const CODES = 'tabOAuth Authorization Code';

/** What the authorize step binds to a code. */
export interface CodeGrant {
  client: string;
  user: string;
  scopes: readonly string[];
  expiresAt: Date;
  redirectUri: string;
  nonce?: string;
  /** The PKCE S256 challenge (base64url of the verifier's SHA-256); only S256 is ever stored. */
  codeChallenge?: string;
}

/** A stored code: its grant, its digest (the family of the tokens issued from it) and whether it is still unspent. */
export interface StoredCode extends CodeGrant {
  digest: string;
  valid: boolean;
}

/** Writes the row of a new code (its digest is the row's name). */
export async function saveCode(site: Site, code: string, grant: CodeGrant): Promise<void> {
  const stamp = now();
  const digest = tokenDigest(code);
  await site.db.knex(CODES).insert({
    name: digest,
    authorization_code: digest,
    client: grant.client,
    user: grant.user,
    scopes: grant.scopes.join(' '),
    expiration_time: datetimeOf(grant.expiresAt),
    redirect_uri_bound_to_authorization_code: grant.redirectUri,
    validity: 'Valid',
    nonce: grant.nonce ?? null,
    code_challenge: grant.codeChallenge ?? null,
    code_challenge_method: grant.codeChallenge ? 's256' : null,
    owner: grant.user,
    modified_by: grant.user,
    creation: stamp,
    modified: stamp,
    docstatus: 0,
    idx: 0,
  });
}

interface CodeRow {
  name: string;
  client: string | null;
  user: string | null;
  scopes: string | null;
  expiration_time: unknown;
  redirect_uri_bound_to_authorization_code: string | null;
  validity: string | null;
  nonce: string | null;
  code_challenge: string | null;
  modified_by: string | null;
}

/** The stored code a client presents, spent or not; undefined when there is none. */
export async function findCode(site: Site, code: string): Promise<StoredCode | undefined> {
  const row = (await site.db
    .knex(CODES)
    .where('authorization_code', tokenDigest(code))
    .first(
      'name',
      'client',
      'user',
      'scopes',
      'expiration_time',
      'redirect_uri_bound_to_authorization_code',
      'validity',
      'nonce',
      'code_challenge',
      'modified_by',
    )) as CodeRow | undefined;
  if (!row || !row.client || !row.user) return undefined;
  // A code row whose last writer may not act as its user (written behind the API) grants nothing.
  if (!row.modified_by || !mayActAs(row.modified_by, row.user)) return undefined;
  return {
    digest: row.name,
    client: row.client,
    user: row.user,
    scopes: parseScopes(row.scopes),
    expiresAt: parseStoredDatetime(row.expiration_time),
    redirectUri: row.redirect_uri_bound_to_authorization_code ?? '',
    ...(row.nonce ? { nonce: row.nonce } : {}),
    ...(row.code_challenge ? { codeChallenge: row.code_challenge } : {}),
    valid: row.validity === 'Valid',
  };
}

/** Spends a code: true for the one call that turns it from Valid to Invalid, false for every later (or racing) one. */
export async function spendCode(site: Site, code: string): Promise<boolean> {
  const count = await site.db
    .knex(CODES)
    .where({ authorization_code: tokenDigest(code), validity: 'Valid' })
    .update({ validity: 'Invalid', modified: now() });
  return count === 1;
}
