// Controller of OAuth Client: client_id set on insert, the secret generated when not given and kept only as a digest.
import { createHash, randomBytes } from 'node:crypto';
import { Document, ValidationError } from 'doctype-service';

/** Stored secrets are `sha256:<hex digest>`; the plain secret is shown only in the answer to the write that set it. */
const DIGEST_PREFIX = 'sha256:';

/** Plain secrets set by this write, put back on the document after it is stored so the answer shows them once. */
const plainSecrets = new WeakMap<Document, string>();

function digest(secret: string): string {
  return DIGEST_PREFIX + createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The lines (or spaces) of a multi-value field, trimmed, without empties. */
function lines(value: unknown, separator: RegExp): string[] {
  return String(value ?? '')
    .split(separator)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** A redirect URI must be an absolute http(s) URL without a fragment (RFC 6749 section 3.1.2). */
function checkRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ValidationError(`Redirect URI ${uri.slice(0, 200)} is not an absolute URL`);
  }
  if (!['http:', 'https:'].includes(url.protocol) && !/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol))
    throw new ValidationError(`Redirect URI ${uri.slice(0, 200)} must be http(s) or a private-use scheme`);
  if (uri.includes('#')) throw new ValidationError('A redirect URI may not have a fragment');
}

/** An OAuth client: a third-party app or mobile client that signs users in through this service. */
export default class OAuthClient extends Document {
  validate(): void {
    if (this.is_new || !this.client_id) this.client_id = this.name;
    const type = String(this.client_type || 'Confidential');
    if (type === 'Public') {
      // RFC 6749 section 2.1: a public client cannot keep a secret; it proves itself with PKCE instead.
      this.client_secret = '';
    } else {
      const secret = String(this.client_secret ?? '');
      if (this.is_new || (secret && !secret.startsWith(DIGEST_PREFIX))) {
        const plain = secret && !secret.startsWith(DIGEST_PREFIX) ? secret : randomBytes(24).toString('hex');
        if (plain.length < 16) throw new ValidationError('A client secret needs at least 16 characters');
        plainSecrets.set(this, plain);
        this.client_secret = digest(plain);
      }
    }
    const uris = lines(this.redirect_uris, /\r?\n/);
    if (this.default_redirect_uri && !uris.includes(String(this.default_redirect_uri).trim()))
      uris.unshift(String(this.default_redirect_uri).trim());
    for (const uri of uris) checkRedirectUri(uri);
    this.redirect_uris = uris.join('\n');
    if (!this.default_redirect_uri && uris.length) this.default_redirect_uri = uris[0];
    this.scopes = lines(this.scopes, /\s+/).join('\n');
    if (!this.scopes) throw new ValidationError('Scopes: at least one scope is needed');
    if (this.grant_type === 'Authorization Code' && uris.length === 0)
      throw new ValidationError('An Authorization Code client needs at least one redirect URI');
    if (this.grant_type === 'Client Credentials' && !this.user)
      throw new ValidationError('A Client Credentials client needs a User (its tokens act as that user)');
    if (this.grant_type === 'Client Credentials' && type === 'Public')
      throw new ValidationError('A Client Credentials client must be Confidential');
  }

  on_update(): void {
    const plain = plainSecrets.get(this);
    if (plain !== undefined) this.client_secret = plain;
  }
}
