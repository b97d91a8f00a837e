// The site's OpenID signing keys (RS256): generated once, kept in the site's database, published as a JWKS.
import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { jose, type CryptoKey, type JWK } from './jose';
import { SYSTEM_TABLES } from '../db/migrate';
import type { Site } from '../site';
import { SitePlugin } from '../site';

/** The key ID tokens are signed with: its id, private key, and the public JWK published. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

interface KeyRow {
  kid: string;
  private_jwk: string;
  public_jwk: string;
}

/** The site's keys as loaded in this process (a failed load is tried again at the next use). */
const KEYS = new SitePlugin<{ keys?: Promise<{ signing: SigningKey; published: JWK[] }> }>(
  'oauth signing keys',
  () => ({}),
);

async function readKeys(site: Site): Promise<KeyRow[]> {
  return (await site.db
    .knex(SYSTEM_TABLES.oauthKeys)
    .orderBy([{ column: 'created_at' }, { column: 'kid' }])
    .select('kid', 'private_jwk', 'public_jwk')) as KeyRow[];
}

/**
 * Makes the site's first key pair (RSA 2048) and stores it, as JWKs. Node's crypto makes and exports it, so that creating
 * a site does not load jose (the first signature does).
 */
async function createKey(site: Site): Promise<void> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const kid = randomBytes(12).toString('base64url');
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256' };
  await site.db.knex(SYSTEM_TABLES.oauthKeys).insert({
    kid,
    private_jwk: JSON.stringify(privateJwk),
    public_jwk: JSON.stringify(publicJwk),
    created_at: Date.now(),
  });
}

async function loadKeys(site: Site): Promise<{ signing: SigningKey; published: JWK[] }> {
  let rows = await readKeys(site);
  if (rows.length === 0) {
    await createKey(site);
    // Two processes may both have made one: every process signs with the oldest and publishes all of them.
    rows = await readKeys(site);
  }
  const first = rows[0] as KeyRow;
  const privateKey = (await jose().importJWK(JSON.parse(first.private_jwk) as JWK, 'RS256')) as CryptoKey;
  return {
    signing: { kid: first.kid, privateKey, publicJwk: JSON.parse(first.public_jwk) as JWK },
    published: rows.map((row) => JSON.parse(row.public_jwk) as JWK),
  };
}

/** Loads (once per process) the site's keys, making the first pair when there is none. */
function siteKeys(site: Site): Promise<{ signing: SigningKey; published: JWK[] }> {
  const state = KEYS.of(site);
  if (!state.keys) {
    const keys = loadKeys(site);
    state.keys = keys;
    keys.catch(() => {
      if (state.keys === keys) state.keys = undefined;
    });
  }
  return state.keys;
}

/** The key ID tokens are signed with. */
export async function signingKey(site: Site): Promise<SigningKey> {
  return (await siteKeys(site)).signing;
}

/** The public keys of the JWKS document. */
export async function publishedKeys(site: Site): Promise<JWK[]> {
  return (await siteKeys(site)).published;
}

/** Makes the site's signing key now when it has none (called at site creation by openSite); loads nothing. */
export async function ensureSigningKey(site: Site): Promise<void> {
  if ((await readKeys(site)).length === 0) await createKey(site);
}
