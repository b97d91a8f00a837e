// The authorization code grant (RFC 6749 section 4.1.3, PKCE by RFC 7636) on the library's public AbstractGrantType (its
// index exports no concrete grant). The code is spent before PKCE is checked, so a wrong verifier costs the code; S256
// only; a code presented by another client, or expired, is refused and spent all the same (the first exchange of a code
// spends it, whoever makes it); a `redirect_uri` differing from the authorize request's is `invalid_grant` (section 5.2).
import { createHash, timingSafeEqual } from 'node:crypto';
import OAuth2Server from '@node-oauth/oauth2-server';

/** RFC 6749 appendix A.11: a code is VSCHAR (printable ASCII). */
const VSCHAR = /^[\x20-\x7E]+$/;
/** RFC 7636 section 4.1: a code verifier is 43-128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The S256 code challenge of `verifier`: BASE64URL(SHA256(verifier)), without padding. */
function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** Whether two strings are equal, in time that does not depend on where they differ. */
function sameText(trusted: string, given: string): boolean {
  const a = Buffer.from(trusted);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The grant's model (the site's OAuth model implements every call). */
type CodeModel = OAuth2Server.AuthorizationCodeModel;

/** The authorization code grant of the token endpoint (`extendedGrantTypes.authorization_code`). */
export class CodeGrant extends OAuth2Server.AbstractGrantType {
  private readonly codes: CodeModel;

  constructor(options: OAuth2Server.TokenOptions & { model?: unknown }) {
    super(options);
    this.codes = options.model as CodeModel;
  }

  async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
    const code = await this.getAuthorizationCode(request, client);
    if (!(await this.codes.revokeAuthorizationCode(code)))
      throw new OAuth2Server.InvalidGrantError('Invalid grant: authorization code is invalid');
    this.verifyPkce(request, code);
    this.validateRedirectUri(request, code);
    return this.saveToken(code, client);
  }

  /** The code presented, refused (and spent) unless it is this client's and unexpired. */
  async getAuthorizationCode(
    request: OAuth2Server.Request,
    client: OAuth2Server.Client,
  ): Promise<OAuth2Server.AuthorizationCode> {
    const presented: unknown = request.body.code;
    if (!presented) throw new OAuth2Server.InvalidRequestError('Missing parameter: `code`');
    if (typeof presented !== 'string' || !VSCHAR.test(presented))
      throw new OAuth2Server.InvalidRequestError('Invalid parameter: `code`');
    const code = await this.codes.getAuthorizationCode(presented);
    let refused: string | undefined;
    if (!code || code.client.id !== client.id) refused = 'authorization code is invalid';
    else if (!(code.expiresAt instanceof Date) || code.expiresAt < new Date())
      refused = 'authorization code has expired';
    if (!refused) return code as OAuth2Server.AuthorizationCode;
    // Spending an unknown or already spent code changes nothing (a spent one revoked its family on lookup).
    await this.codes.revokeAuthorizationCode({
      authorizationCode: presented,
      user: {},
    } as OAuth2Server.AuthorizationCode);
    throw new OAuth2Server.InvalidGrantError(`Invalid grant: ${refused}`);
  }

  /** RFC 7636 section 4.6: the verifier must hash to the stored S256 challenge; none may be sent without one. */
  private verifyPkce(request: OAuth2Server.Request, code: OAuth2Server.AuthorizationCode): void {
    const verifier: unknown = request.body.code_verifier;
    if (!code.codeChallenge) {
      if (verifier) throw new OAuth2Server.InvalidGrantError('Invalid grant: code verifier is invalid');
      return;
    }
    if (code.codeChallengeMethod && code.codeChallengeMethod.toUpperCase() !== 'S256')
      throw new OAuth2Server.InvalidRequestError('Invalid request: `code_challenge_method` must be S256');
    if (!verifier) throw new OAuth2Server.InvalidGrantError('Missing parameter: `code_verifier`');
    if (typeof verifier !== 'string' || !VERIFIER.test(verifier))
      throw new OAuth2Server.InvalidRequestError('Invalid parameter: `code_verifier`');
    if (!sameText(code.codeChallenge, s256(verifier)))
      throw new OAuth2Server.InvalidGrantError('Invalid grant: code verifier is invalid');
  }

  /** The URI must be the very string the code was issued for. */
  private validateRedirectUri(request: OAuth2Server.Request, code: OAuth2Server.AuthorizationCode): void {
    const sent: unknown = request.body.redirect_uri;
    if (code.redirectUri && sent !== code.redirectUri)
      throw new OAuth2Server.InvalidGrantError('redirect_uri does not match the authorization request');
  }

  /** Issues the access and refresh tokens of the code's user and scope. */
  private async saveToken(
    code: OAuth2Server.AuthorizationCode,
    client: OAuth2Server.Client,
  ): Promise<OAuth2Server.Token> {
    const scope = (await this.validateScope(code.user, client, code.scope)) || undefined;
    const token: OAuth2Server.Token = {
      accessToken: await this.generateAccessToken(client, code.user, scope as string[]),
      authorizationCode: code.authorizationCode,
      accessTokenExpiresAt: this.getAccessTokenExpiresAt(),
      refreshToken: await this.generateRefreshToken(client, code.user, scope as string[]),
      refreshTokenExpiresAt: this.getRefreshTokenExpiresAt(),
      ...(scope ? { scope } : {}),
      client,
      user: code.user,
    };
    return (await this.codes.saveToken(token, client, code.user)) as OAuth2Server.Token;
  }
}
