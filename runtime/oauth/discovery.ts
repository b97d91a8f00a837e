// OpenID discovery: `/.well-known/openid-configuration` and the JWKS at `/.well-known/jwks.json`.
import type { AppContext } from '../http/state';
import { issuerOf } from './issuer';
import { publishedKeys } from './signing-keys';

const METHOD = '/api/method/frappe.integrations.oauth2';

/** GET: the provider metadata (OpenID Connect Discovery 1.0, RFC 8414), every endpoint under the issuer. */
export function openidConfiguration(ctx: AppContext): void {
  const issuer = issuerOf(ctx);
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = {
    issuer,
    authorization_endpoint: `${issuer}${METHOD}.authorize`,
    token_endpoint: `${issuer}${METHOD}.get_token`,
    userinfo_endpoint: `${issuer}${METHOD}.openid_profile`,
    revocation_endpoint: `${issuer}${METHOD}.revoke_token`,
    introspection_endpoint: `${issuer}${METHOD}.introspect_token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: ['openid', 'all'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'at_hash', 'email', 'name', 'roles'],
  };
}

/** GET: the site's public signing keys (RFC 7517), for verifying ID tokens. */
export async function jwks(ctx: AppContext): Promise<void> {
  const keys = await publishedKeys(ctx.state.site);
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = { keys };
}
