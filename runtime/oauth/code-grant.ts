// The authorization code grant as the library implements it, with RFC 6749's error code for a changed redirect URI.
import OAuth2Server from '@node-oauth/oauth2-server';

/** The library's grant class, as its index exports only the abstract base: a concrete grant constructor. */
type GrantClass = new (options: OAuth2Server.TokenOptions) => OAuth2Server.AbstractGrantType & {
  handle(
    request: OAuth2Server.Request,
    client: OAuth2Server.Client,
  ): Promise<OAuth2Server.Token | false | null | undefined>;
  getAuthorizationCode(
    request: OAuth2Server.Request,
    client: OAuth2Server.Client,
  ): Promise<OAuth2Server.AuthorizationCode>;
  model: OAuth2Server.AuthorizationCodeModel;
};
const AuthorizationCodeGrantType =
  require('@node-oauth/oauth2-server/lib/grant-types/authorization-code-grant-type') as GrantClass;

/**
 * The library's authorization code grant (code spent before PKCE is checked, S256 only, client bound), except that a
 * `redirect_uri` differing from the authorize request's is `invalid_grant` (RFC 6749 section 5.2), not
 * `invalid_request`, and a code refused before the library spends it (presented by another client, expired) is spent
 * all the same: the first exchange of a code spends it, whoever makes it.
 */
export class CodeGrant extends AuthorizationCodeGrantType {
  async getAuthorizationCode(
    request: OAuth2Server.Request,
    client: OAuth2Server.Client,
  ): Promise<OAuth2Server.AuthorizationCode> {
    try {
      return await super.getAuthorizationCode(request, client);
    } catch (err) {
      const code: unknown = request.body.code;
      // Spending an unknown or already spent code changes nothing (a spent one revoked its family on lookup).
      if (err instanceof OAuth2Server.InvalidGrantError && typeof code === 'string' && code)
        await this.model.revokeAuthorizationCode({
          authorizationCode: code,
          user: {},
        } as OAuth2Server.AuthorizationCode);
      throw err;
    }
  }

  /** Called by the library after the code is spent: the URI must be the very string the code was issued for. */
  validateRedirectUri(request: OAuth2Server.Request, code: OAuth2Server.AuthorizationCode): void {
    const sent: unknown = request.body.redirect_uri;
    if (code.redirectUri && sent !== code.redirectUri)
      throw new OAuth2Server.InvalidGrantError('redirect_uri does not match the authorization request');
  }
}
