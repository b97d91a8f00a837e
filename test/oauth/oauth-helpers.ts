// Helpers shared by the OAuth provider tests: registering clients and calling the token endpoint.
import { createHash, randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import type { TestSite } from '../helpers/test-site';

/** The token endpoint's v1 path. */
export const TOKEN_PATH = '/api/method/frappe.integrations.oauth2.get_token';

/** A registered client: its document name, client_id and (confidential clients) the plain secret of the create answer. */
export interface RegisteredClient {
  name: string;
  clientId: string;
  secret: string;
}

/** Registers an OAuth Client as Administrator through the REST API; throws unless it is created. */
export async function registerClient(
  t: TestSite,
  fields: Record<string, unknown>,
): Promise<RegisteredClient> {
  const res = await t.http
    .post('/api/resource/OAuth Client')
    .set('Authorization', t.adminToken)
    .send({ app_name: 'Test App', ...fields });
  if (res.status !== 201) throw new Error(`OAuth Client: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    name: res.body.data.name,
    clientId: res.body.data.client_id,
    secret: res.body.data.client_secret ?? '',
  };
}

/** `Basic base64(id:secret)` (RFC 6749 section 2.3.1, form-encoding each part first). */
export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s);
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

/** POSTs a form to the token endpoint (optionally with client_secret_basic). */
export function tokenRequest(
  t: TestSite,
  form: Record<string, string>,
  auth?: { id: string; secret: string },
  path = TOKEN_PATH,
): Promise<Response> {
  const req = t.http.post(path).type('form');
  if (auth) req.set('Authorization', basic(auth.id, auth.secret));
  return req.send(form);
}

/** The authorize endpoint's v1 path. */
export const AUTHORIZE_PATH = '/api/method/frappe.integrations.oauth2.authorize';

/** A PKCE pair (RFC 7636): a random verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The query parameters of a Location header (relative or absolute). */
export function locationParams(res: Response): URLSearchParams {
  return new URL(String(res.headers.location), 'http://svc.invalid').searchParams;
}
