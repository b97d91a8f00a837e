// The model @node-oauth/oauth2-server calls: clients, scopes, users, codes and token storage, over this site's DocTypes.
import OAuth2Server from '@node-oauth/oauth2-server';
import { loadUser, mayActAs } from '../auth/users';
import type { Site } from '../site';
import { findCode, saveCode, spendCode } from './code-store';
import { oauthLifetimes } from './oauth-config';
import { authenticateClient, loadClient, type OAuthClientRecord } from './oauth-clients';
import {
  familyRevoked,
  findRefreshToken,
  newToken,
  revokeFamily,
  revokeRefreshToken,
  storeToken,
} from './token-store';

type Token = OAuth2Server.Token;
type Client = OAuth2Server.Client;
type User = OAuth2Server.User;
type AuthorizationCode = OAuth2Server.AuthorizationCode;
type RefreshToken = OAuth2Server.RefreshToken;

/**
 * The user a grant acts for, with the authorization it carries through the library: the code's `family` (tokens
 * issued from one code, and every refresh of them) and the OpenID `nonce` of the authorize request.
 */
export interface GrantUser {
  name: string;
  family?: string;
  nonce?: string;
}

/** The scopes a token may hold: those requested (all must be the client's), or the client's own when none are. */
export function grantedScopes(
  client: OAuthClientRecord,
  requested: readonly string[] | undefined,
): string[] | false {
  if (!requested || requested.length === 0) return [...client.scopes];
  const unique = [...new Set(requested)];
  return unique.every((scope) => client.scopes.includes(scope)) ? unique : false;
}

/** The library's whole model: every grant this provider serves. */
export type OAuthModel = OAuth2Server.AuthorizationCodeModel &
  OAuth2Server.RefreshTokenModel &
  OAuth2Server.ClientCredentialsModel;

/** An enabled user's name, or undefined (a disabled or deleted user's grants die with it). */
async function enabledUser(site: Site, name: string): Promise<string | undefined> {
  const user = await loadUser(site.db.knex, name);
  return user && user.enabled ? user.name : undefined;
}

/** The model of one site: every grant reads and writes this site's rows. */
export function createOAuthModel(site: Site): OAuthModel {
  return {
    /** The authorize step asks with a null secret (it identifies the client only); the token endpoint authenticates it. */
    async getClient(clientId: string, clientSecret: string | undefined | null) {
      if (clientSecret === null) return (await loadClient(site, clientId)) ?? false;
      const client = await authenticateClient(site, clientId, clientSecret || undefined);
      return client ?? false;
    },

    async generateAccessToken() {
      return newToken();
    },

    async generateRefreshToken() {
      return newToken();
    },

    async generateAuthorizationCode() {
      return newToken();
    },

    async validateScope(_user: User, client: Client, scope?: string[]) {
      return grantedScopes(client as OAuthClientRecord, scope);
    },

    /** Registered redirect URIs match exactly, character for character (RFC 6749 section 3.1.2.3). */
    async validateRedirectUri(redirectUri: string, client: Client) {
      return (client as OAuthClientRecord).redirectUris.includes(redirectUri);
    },

    /**
     * Client credentials: the token acts as the client's own user, who must exist and be enabled, and whom the client's
     * last writer may act as (a row written before that rule was enforced on saves, or behind the API, grants nothing).
     */
    async getUserFromClient(client: Client) {
      const { user: name, writtenBy } = client as OAuthClientRecord;
      const bound = name && writtenBy && mayActAs(writtenBy, name);
      const user = bound && (await enabledUser(site, name));
      return user ? { name: user } : false;
    },

    async saveAuthorizationCode(code, client: Client, user: User) {
      const grantUser = user as GrantUser;
      await saveCode(site, code.authorizationCode, {
        client: (client as OAuthClientRecord).id,
        user: grantUser.name,
        scopes: code.scope ?? [],
        expiresAt: code.expiresAt,
        redirectUri: code.redirectUri,
        ...(grantUser.nonce ? { nonce: grantUser.nonce } : {}),
        // The authorize step admits S256 only (plain is refused there), so a stored challenge is always S256.
        ...(code.codeChallenge ? { codeChallenge: code.codeChallenge } : {}),
      });
      return { ...code, client, user };
    },

    /**
     * A code presented at the token endpoint. A spent code is refused and, being presented again, revokes the tokens
     * its first exchange issued (RFC 6749 section 4.1.2).
     */
    async getAuthorizationCode(code: string) {
      const stored = await findCode(site, code);
      if (!stored) return false;
      if (!stored.valid) {
        await revokeFamily(site, stored.digest);
        return false;
      }
      const user = await enabledUser(site, stored.user);
      if (!user) return false;
      const grantUser: GrantUser = {
        name: user,
        family: stored.digest,
        ...(stored.nonce ? { nonce: stored.nonce } : {}),
      };
      const found: AuthorizationCode = {
        authorizationCode: code,
        expiresAt: stored.expiresAt,
        redirectUri: stored.redirectUri,
        scope: [...stored.scopes],
        client: { id: stored.client, grants: [] },
        user: grantUser,
        ...(stored.codeChallenge ? { codeChallenge: stored.codeChallenge, codeChallengeMethod: 'S256' } : {}),
      };
      return found;
    },

    /** Spends the code; a racing second exchange loses here and, as a reuse, revokes the first one's tokens. */
    async revokeAuthorizationCode(code: AuthorizationCode) {
      if (await spendCode(site, code.authorizationCode)) return true;
      await revokeFamily(site, (code.user as GrantUser).family);
      return false;
    },

    /**
     * A refresh token presented for rotation. One that was already rotated (or revoked) is refused and revokes its whole
     * family: someone holds a copy (OAuth 2.0 Security BCP section 4.14.2).
     */
    async getRefreshToken(refreshToken: string) {
      const stored = await findRefreshToken(site, refreshToken);
      if (!stored) return false;
      if (!stored.active) {
        await revokeFamily(site, stored.family);
        return false;
      }
      const user = await enabledUser(site, stored.user);
      if (!user) return false;
      const lifetime = oauthLifetimes(site.config.site).refreshToken;
      const found: RefreshToken = {
        refreshToken,
        refreshTokenExpiresAt: new Date(stored.issuedAt.getTime() + lifetime * 1000),
        scope: stored.scopes,
        client: { id: stored.client, grants: [] },
        user: { name: user, ...(stored.family ? { family: stored.family } : {}) } satisfies GrantUser,
      };
      return found;
    },

    /** Rotation: the presented refresh token's row is revoked; losing a race to another exchange is a reuse. */
    async revokeToken(token: RefreshToken | Token) {
      if (!token.refreshToken) return false;
      if (await revokeRefreshToken(site, token.refreshToken)) return true;
      await revokeFamily(site, (token.user as GrantUser).family);
      return false;
    },

    async saveToken(token: Token, client: Client, user: User) {
      const grantUser = user as GrantUser;
      await storeToken(site, {
        accessToken: token.accessToken,
        accessTokenExpiresAt: token.accessTokenExpiresAt ?? new Date(Date.now() + 3600_000),
        ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
        client: (client as OAuthClientRecord).id,
        user: String(grantUser.name),
        scopes: token.scope ?? [],
        ...(grantUser.family ? { family: grantUser.family } : {}),
      });
      // A reuse detected while this token was being issued (a racing exchange of the same code or refresh token)
      // revoked the family before this row existed: withdraw it too.
      if (grantUser.family && (await familyRevoked(site, grantUser.family))) {
        await revokeFamily(site, grantUser.family);
        throw new OAuth2Server.InvalidGrantError('Invalid grant: this grant was revoked');
      }
      // Only the token's own attributes: the answer is built from what this returns.
      const saved: Token = {
        accessToken: token.accessToken,
        ...(token.accessTokenExpiresAt ? { accessTokenExpiresAt: token.accessTokenExpiresAt } : {}),
        ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
        ...(token.refreshTokenExpiresAt ? { refreshTokenExpiresAt: token.refreshTokenExpiresAt } : {}),
        ...(token.scope ? { scope: token.scope } : {}),
        client,
        user,
      };
      return saved;
    },

    // Bearer tokens are verified by the runtime's own middleware (runtime/auth/bearer-tokens.ts), not the library.
    async getAccessToken() {
      return false;
    },
  };
}
