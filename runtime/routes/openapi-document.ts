// Serves the generated OpenAPI documents (rows `/api/openapi.json`, `/api/v1/openapi.json`, `/api/v2/openapi.json`):
// minified, compressed with br or gzip as the client accepts, with an ETag (304 on If-None-Match) and Cache-Control.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DoesNotExistError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { withApiScripts } from '../scripts/openapi-scripts';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** One served body: its bytes, and each compressed form once it has been asked for. */
interface Variant {
  etag: string;
  identity: Buffer;
  encoded: Map<'br' | 'gzip', Promise<Buffer>>;
}

/** Bodies remembered: the two documents, each with and without the API scripts of a moment. */
const MAX_VARIANTS = 8;

/** Clients may keep the document but must ask again (answered 304 while the ETag still matches). */
const CACHE_CONTROL = 'no-cache';

function compress(body: Buffer, encoding: 'br' | 'gzip'): Promise<Buffer> {
  return encoding === 'br'
    ? // Quality 9: within 10% of the densest, in a twentieth of the time of 11 (compressed once per document).
      brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } })
    : gzip(body, { level: 9 });
}

/** Answers with `<generatedDir>/openapi/v<version>.json` of the path's API version, read once, plus the API scripts. */
export function createOpenApiHandler(generatedDir: string): (ctx: AppContext) => Promise<void> {
  const files = new Map<string, Promise<string>>();
  const variants = new Map<string, Variant>();

  function variantOf(text: string): Variant {
    let found = variants.get(text);
    if (!found) {
      const identity = Buffer.from(JSON.stringify(JSON.parse(text)));
      const etag = createHash('sha256').update(identity).digest('base64url').slice(0, 27);
      found = { etag, identity, encoded: new Map() };
      if (variants.size >= MAX_VARIANTS) variants.delete(variants.keys().next().value as string);
      variants.set(text, found);
    }
    return found;
  }

  return async function serveOpenApi(ctx) {
    const file = `v${ctx.state.version}.json`;
    let text = files.get(file);
    if (!text) {
      text = readFile(path.resolve(generatedDir, 'openapi', file), 'utf8');
      files.set(file, text);
    }
    let generated: string;
    try {
      generated = await text;
    } catch {
      files.delete(file);
      throw new DoesNotExistError('OpenAPI document not generated: run npm run generate');
    }
    const variant = variantOf(await withApiScripts(ctx.state.site, ctx.state.version, generated));
    const chosen = ctx.acceptsEncodings('br', 'gzip', 'identity');
    const encoding = chosen === 'br' || chosen === 'gzip' ? chosen : undefined;
    ctx.vary('Accept-Encoding');
    ctx.set('Cache-Control', CACHE_CONTROL);
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.etag = `"${variant.etag}${encoding ? `-${encoding}` : ''}"`;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    if (!encoding) {
      ctx.body = variant.identity;
      return;
    }
    let bytes = variant.encoded.get(encoding);
    if (!bytes) {
      bytes = compress(variant.identity, encoding);
      variant.encoded.set(encoding, bytes);
    }
    ctx.set('Content-Encoding', encoding);
    ctx.body = await bytes;
  };
}
