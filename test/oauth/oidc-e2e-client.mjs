// The relying party of the OpenID end-to-end test: a separate Node process that signs in through the live server with
// openid-client (discovery, code + PKCE, ID token, userinfo, refresh, revocation, introspection, client credentials),
// playing the browser with fetch. Prints one JSON object of what it saw; the test (oidc-e2e.test.ts) checks it.
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const env = process.env;
const ISSUER = env.ISSUER;
const REDIRECT_URI = env.REDIRECT_URI;
const seen = {};

/** The `sid=…` cookie a response sets. */
function sidCookie(res) {
  const line = res.headers.getSetCookie().find((c) => c.startsWith('sid='));
  return line ? line.split(';')[0] : undefined;
}

/** The hidden fields of the consent form. */
function formFields(html) {
  const fields = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]] = m[2].replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
  return fields;
}

/** The browser's part: authorize → sign-in page → consent → the client's redirect URI (not followed). */
async function browser(authorizationUrl) {
  const first = await fetch(authorizationUrl, { redirect: 'manual' });
  seen.authorizeStatus = first.status;
  const signInUrl = new URL(first.headers.get('location'), ISSUER);
  seen.signInPath = signInUrl.pathname;
  const form = new URLSearchParams({
    usr: env.USER_NAME,
    pwd: env.USER_PASSWORD,
    'redirect-to': signInUrl.searchParams.get('redirect-to'),
  });
  const signedIn = await fetch(new URL('/login', ISSUER), { method: 'POST', body: form, redirect: 'manual' });
  seen.signInStatus = signedIn.status;
  const cookie = sidCookie(signedIn);
  const consent = await fetch(new URL(signedIn.headers.get('location'), ISSUER), {
    headers: { cookie },
    redirect: 'manual',
  });
  seen.consentStatus = consent.status;
  const fields = formFields(await consent.text());
  const approved = await fetch(new URL(consent.url), {
    method: 'POST',
    headers: { cookie },
    body: new URLSearchParams({ ...fields, allowed: 'true' }),
    redirect: 'manual',
  });
  seen.approveStatus = approved.status;
  return new URL(approved.headers.get('location'));
}

/** An API call with the bearer: its status and the user it ran as (a refusal's challenge is thrown; its status kept). */
async function call(config, accessToken) {
  let res;
  try {
    res = await client.fetchProtectedResource(
      config,
      accessToken,
      new URL('/api/method/frappe.auth.get_logged_user', ISSUER),
      'GET',
    );
  } catch (err) {
    if (!err.response) throw err;
    return { status: err.response.status, challenge: err.response.headers.get('www-authenticate') };
  }
  return { status: res.status, user: res.status === 200 ? (await res.json()).message : undefined };
}

const insecure = { execute: [client.allowInsecureRequests] };
const config = await client.discovery(
  new URL(ISSUER),
  env.APP_ID,
  { token_endpoint_auth_method: 'none' },
  client.None(),
  insecure,
);
seen.issuer = config.serverMetadata().issuer;

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const authorizationUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: REDIRECT_URI,
  scope: 'openid all',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});
const callback = await browser(authorizationUrl);
const tokens = await client.authorizationCodeGrant(config, callback, {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const claims = tokens.claims();
seen.claims = claims;
// The signature, checked against the published JWKS (openid-client relies on TLS for that).
const verified = await jwtVerify(
  tokens.id_token,
  createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri)),
  {
    issuer: ISSUER,
    audience: env.APP_ID,
    algorithms: ['RS256'],
  },
);
seen.signatureVerified = verified.payload.sub === claims.sub;
seen.apiCall = await call(config, tokens.access_token);
seen.userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);

const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
seen.refreshedScope = refreshed.scope;
seen.refreshedIdTokenSub = refreshed.claims()?.sub;
seen.afterRefresh = {
  fresh: await call(config, refreshed.access_token),
  old: await call(config, tokens.access_token),
};
await client.tokenRevocation(config, refreshed.refresh_token);
seen.afterRevoke = await call(config, refreshed.access_token);

const machine = await client.discovery(new URL(ISSUER), env.CC_ID, env.CC_SECRET, undefined, insecure);
const machineTokens = await client.clientCredentialsGrant(machine, { scope: 'all' });
seen.clientCredentials = {
  scope: machineTokens.scope,
  hasIdToken: machineTokens.id_token !== undefined,
  apiCall: await call(machine, machineTokens.access_token),
  introspection: await client.tokenIntrospection(machine, machineTokens.access_token),
};
process.stdout.write(JSON.stringify(seen));
