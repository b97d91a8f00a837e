// Client authentication at the revocation and introspection endpoints: client_secret_basic or client_secret_post.
import { OAuthError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext } from '../http/state';
import { authenticateClient, type OAuthClientRecord } from './oauth-clients';

const INVALID_CLIENT = 'Client authentication failed';

/** `Basic base64(urlencoded id : urlencoded secret)` (RFC 6749 section 2.3.1); undefined when it is not one. */
function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!match) return undefined;
  const text = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      id: decodeURIComponent(text.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(text.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return undefined;
  }
}

/**
 * The client a request authenticates as: a confidential client by its secret (header or form), a public client by its
 * `client_id` alone when `allowPublic`. Anything else is 401 `invalid_client` (with `WWW-Authenticate` when the header
 * was used).
 */
export async function requestClient(ctx: AppContext, allowPublic: boolean): Promise<OAuthClientRecord> {
  const header = ctx.get('authorization');
  const body = bodyObject(ctx) ?? {};
  const refuse = (): never => {
    throw new OAuthError('invalid_client', INVALID_CLIENT, {
      status: 401,
      ...(header ? { headers: { 'WWW-Authenticate': 'Basic realm="oauth"' } } : {}),
    });
  };
  let id: unknown = body.client_id;
  let secret: unknown = body.client_secret;
  if (header) {
    const basic = basicCredentials(header);
    if (!basic) return refuse();
    if (body.client_secret !== undefined) return refuse(); // one method only (RFC 6749 section 2.3)
    ({ id, secret } = basic);
  }
  if (typeof id !== 'string' || !id || (secret !== undefined && typeof secret !== 'string')) return refuse();
  const client = await authenticateClient(ctx.state.site, id, secret || undefined);
  if (!client || (!client.confidential && !allowPublic)) return refuse();
  return client;
}

/** The form's `token` parameter: text, at most 512 characters; else 400 `invalid_request`. */
export function tokenParam(ctx: AppContext): string {
  const token = bodyObject(ctx)?.token;
  if (typeof token !== 'string' || !token || token.length > 512)
    throw new OAuthError('invalid_request', 'Missing or invalid parameter: token');
  return token;
}
