// OpenID Connect ID tokens: RS256 JWTs with the user's claims, signed with the site's key.
import { createHash } from 'node:crypto';
import type { Site } from '../site';
import { jose } from './jose';
import { signingKey } from './signing-keys';
import type { UserClaims } from './user-claims';

/** What an ID token is issued for. */
export interface IdTokenInput {
  issuer: string;
  clientId: string;
  claims: UserClaims;
  accessToken: string;
  /** Seconds the ID token is valid (the access token's lifetime). */
  lifetime: number;
  nonce?: string;
}

/** `at_hash`: the left half of the access token's SHA-256, base64url (OpenID Connect Core 3.1.3.6). */
function accessTokenHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** Signs an ID token: `iss`, `sub`, `aud`, `iat`, `exp`, `at_hash`, `nonce` when the request sent one, the claims. */
export async function signIdToken(site: Site, input: IdTokenInput): Promise<string> {
  const key = await signingKey(site);
  const { sub, ...claims } = input.claims;
  return new (jose().SignJWT)({
    ...claims,
    at_hash: accessTokenHash(input.accessToken),
    ...(input.nonce ? { nonce: input.nonce } : {}),
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(input.issuer)
    .setSubject(sub)
    .setAudience(input.clientId)
    .setIssuedAt()
    .setExpirationTime(`${input.lifetime}s`)
    .sign(key.privateKey);
}
