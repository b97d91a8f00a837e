// The model @node-oauth/oauth2-server calls: clients, scopes, users and token storage, over this site's DocTypes.
import type OAuth2Server from '@node-oauth/oauth2-server';
import { loadUser } from '../auth/users';
import type { Site } from '../site';
import { authenticateClient, type OAuthClientRecord } from './oauth-clients';
import { newToken, storeToken } from './token-store';

type Token = OAuth2Server.Token;
type Client = OAuth2Server.Client;
type User = OAuth2Server.User;

/** The scopes a token may hold: those requested (all must be the client's), or the client's own when none are. */
export function grantedScopes(
  client: OAuthClientRecord,
  requested: readonly string[] | undefined,
): string[] | false {
  if (!requested || requested.length === 0) return [...client.scopes];
  const unique = [...new Set(requested)];
  return unique.every((scope) => client.scopes.includes(scope)) ? unique : false;
}

/** The model of one site: every grant reads and writes this site's rows. */
export function createOAuthModel(site: Site): OAuth2Server.ClientCredentialsModel {
  return {
    async getClient(clientId: string, clientSecret: string | undefined) {
      const client = await authenticateClient(site, clientId, clientSecret || undefined);
      return client ?? false;
    },

    async generateAccessToken() {
      return newToken();
    },

    async validateScope(_user: User, client: Client, scope?: string[]) {
      return grantedScopes(client as OAuthClientRecord, scope);
    },

    /** Client credentials: the token acts as the client's own user, who must exist and be enabled. */
    async getUserFromClient(client: Client) {
      const name = (client as OAuthClientRecord).user;
      if (!name) return false;
      const user = await loadUser(site.db.knex, name);
      return user && user.enabled ? { name: user.name } : false;
    },

    async saveToken(token: Token, client: Client, user: User) {
      await storeToken(site, {
        accessToken: token.accessToken,
        accessTokenExpiresAt: token.accessTokenExpiresAt ?? new Date(Date.now() + 3600_000),
        ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
        client: (client as OAuthClientRecord).id,
        user: String(user.name),
        scopes: token.scope ?? [],
      });
      return { ...token, client, user };
    },

    // Bearer tokens are verified by the runtime's own middleware (runtime/auth/bearer-tokens.ts), not the library.
    async getAccessToken() {
      return false;
    },
  };
}
