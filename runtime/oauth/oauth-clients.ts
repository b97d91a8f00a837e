// OAuth Client rows as the token endpoint sees them: grants, redirect URIs, scopes, and the secret checked as a digest.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Site } from '../site';
import { parseScopes } from '../auth/scopes';

/** An OAuth client as the protocol needs it. */
export interface OAuthClientRecord {
  /** The document name (the `client` of its tokens). */
  id: string;
  clientId: string;
  appName: string;
  /** The user client-credentials tokens act as. */
  user?: string;
  /** Who last wrote the row (`modified_by`): its client-credentials tokens act as `user` only if that writer may. */
  writtenBy?: string;
  confidential: boolean;
  /** oauth2-server grant names: `authorization_code` + `refresh_token`, or `client_credentials`. */
  grants: string[];
  redirectUris: string[];
  scopes: string[];
  skipAuthorization: boolean;
}

/** The library's grant names for the client's `grant_type`. */
function grantsOf(grantType: unknown): string[] {
  if (grantType === 'Client Credentials') return ['client_credentials'];
  if (grantType === 'Authorization Code') return ['authorization_code', 'refresh_token'];
  return [];
}

/** Reads the client with this client_id; undefined when there is none. */
export async function loadClient(site: Site, clientId: string): Promise<OAuthClientRecord | undefined> {
  const row = await loadClientRow(site, clientId);
  return row && toRecord(row);
}

interface ClientRow {
  name: string;
  client_id: string | null;
  app_name: string | null;
  user: string | null;
  client_type: string | null;
  client_secret: string | null;
  grant_type: string | null;
  redirect_uris: string | null;
  scopes: string | null;
  skip_authorization: unknown;
  modified_by: string | null;
}

async function loadClientRow(site: Site, clientId: string): Promise<ClientRow | undefined> {
  if (!clientId || clientId.length > 140) return undefined;
  return (await site.db
    .knex('tabOAuth Client')
    .where('client_id', clientId)
    .first(
      'name',
      'client_id',
      'app_name',
      'user',
      'client_type',
      'client_secret',
      'grant_type',
      'redirect_uris',
      'scopes',
      'skip_authorization',
      'modified_by',
    )) as ClientRow | undefined;
}

function toRecord(row: ClientRow): OAuthClientRecord {
  return {
    id: row.name,
    clientId: row.client_id ?? row.name,
    appName: row.app_name ?? row.name,
    ...(row.user ? { user: row.user } : {}),
    ...(row.modified_by ? { writtenBy: row.modified_by } : {}),
    confidential: (row.client_type ?? 'Confidential') !== 'Public',
    grants: grantsOf(row.grant_type),
    redirectUris: String(row.redirect_uris ?? '')
      .split(/\r?\n/)
      .map((uri) => uri.trim())
      .filter(Boolean),
    scopes: parseScopes(row.scopes),
    skipAuthorization: Number(row.skip_authorization) === 1,
  };
}

/** Constant-time check of a presented secret against the stored `sha256:<hex>` digest. */
function secretMatches(secret: string, stored: string | null): boolean {
  const expected = Buffer.from(String(stored ?? '').replace(/^sha256:/, ''), 'hex');
  const actual = createHash('sha256').update(secret, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * The client a request authenticates as: a confidential client must present its secret, a public client must not
 * (it has none; PKCE binds its codes). Undefined when the client is unknown or the secret does not match.
 */
export async function authenticateClient(
  site: Site,
  clientId: string,
  secret: string | undefined,
): Promise<OAuthClientRecord | undefined> {
  const row = await loadClientRow(site, clientId);
  if (!row) {
    if (secret) secretMatches(secret, null); // the same work either way
    return undefined;
  }
  const client = toRecord(row);
  if (client.confidential) return secret && secretMatches(secret, row.client_secret) ? client : undefined;
  return secret ? undefined : client;
}
