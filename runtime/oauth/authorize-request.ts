// The authorization request (RFC 6749 section 4.1.1 with PKCE, RFC 7636): checked before consent is asked or given.
import { OAuthError } from '../errors/errors';
import type { Site } from '../site';
import { loadClient, type OAuthClientRecord } from './oauth-clients';
import { grantedScopes } from './oauth-model';

/** The parameters an authorization request carries (and the consent form posts back unchanged). */
export const AUTHORIZE_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
] as const;

/** One parameter of the request. */
export type AuthorizeParam = (typeof AUTHORIZE_PARAMS)[number];

/** A checked authorization request. */
export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  /** The scopes the code will carry (the client's own when none were asked for). */
  scopes: string[];
  /** The request's parameters as sent (strings only), to carry through the consent form. */
  params: Partial<Record<AuthorizeParam, string>>;
}

/** The outcome: a request to ask consent for, or an error to send back to the client at its redirect URI. */
export type CheckedRequest = { ok: true; request: AuthorizationRequest } | { ok: false; redirect: string };

/** RFC 7636 section 4.2: a code challenge is 43 to 128 unreserved characters (S256: 43 base64url characters). */
const CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
/** RFC 6749 appendix A: state, nonce and scope are visible ASCII (nonce and state are bounded here). */
const VSCHAR = /^[\x20-\x7e]{1,512}$/;

/** The redirect that reports an error to the client (RFC 6749 section 4.1.2.1), state echoed. */
export function errorRedirect(
  redirectUri: string,
  error: string,
  description: string,
  state?: string,
): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.toString();
}

/** The parameters from a query or form body: single string values only (a repeated parameter is refused). */
function readParams(source: Record<string, unknown>): Partial<Record<AuthorizeParam, string>> {
  const params: Partial<Record<AuthorizeParam, string>> = {};
  for (const key of AUTHORIZE_PARAMS) {
    const value = source[key];
    if (value === undefined || value === '') continue;
    // RFC 6749 section 3.1: parameters must not be included more than once.
    if (typeof value !== 'string')
      throw new OAuthError('invalid_request', `Parameter ${key} must be given once, as text`);
    params[key] = value;
  }
  return params;
}

/**
 * Checks an authorization request. A request whose client or redirect URI cannot be trusted is refused here (400, never
 * redirected: RFC 6749 section 4.1.2.1); every later problem goes back to the client's redirect URI.
 */
export async function checkAuthorizationRequest(
  site: Site,
  source: Record<string, unknown>,
): Promise<CheckedRequest> {
  const params = readParams(source);
  if (!params.client_id) throw new OAuthError('invalid_request', 'Missing parameter: client_id');
  const client = await loadClient(site, params.client_id);
  if (!client) throw new OAuthError('invalid_client', 'Unknown client_id');
  if (!client.grants.includes('authorization_code'))
    throw new OAuthError('unauthorized_client', 'This client may not use the authorization code grant');
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined) {
    // Only a client with a single registered URI may leave it out (RFC 6749 section 3.1.2.3).
    if (client.redirectUris.length !== 1)
      throw new OAuthError('invalid_request', 'Missing parameter: redirect_uri');
    redirectUri = client.redirectUris[0] as string;
  } else if (!client.redirectUris.includes(redirectUri)) {
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this client');
  }
  const state = params.state;
  const fail = (error: string, description: string): CheckedRequest => ({
    ok: false,
    redirect: errorRedirect(
      redirectUri,
      error,
      description,
      state !== undefined && VSCHAR.test(state) ? state : undefined,
    ),
  });
  if (state !== undefined && !VSCHAR.test(state)) return fail('invalid_request', 'Invalid parameter: state');
  if (params.nonce !== undefined && !VSCHAR.test(params.nonce))
    return fail('invalid_request', 'Invalid parameter: nonce');
  if (params.response_type !== 'code')
    return fail('unsupported_response_type', 'Only response_type=code is supported');
  const method = params.code_challenge_method;
  if (params.code_challenge === undefined) {
    if (!client.confidential)
      return fail('invalid_request', 'A public client must send a PKCE code_challenge (S256)');
    if (method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge');
  } else {
    if (method !== 'S256')
      return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
    if (!CHALLENGE.test(params.code_challenge))
      return fail('invalid_request', 'Invalid parameter: code_challenge');
  }
  const requested = params.scope === undefined ? undefined : params.scope.split(' ').filter(Boolean);
  if (params.scope !== undefined && !VSCHAR.test(params.scope)) return fail('invalid_scope', 'Invalid scope');
  const scopes = grantedScopes(client, requested);
  if (!scopes) return fail('invalid_scope', 'The client may not ask for this scope');
  return { ok: true, request: { client, redirectUri, scopes, params } };
}
