// Serves the generated OpenAPI documents (rows `/api/openapi.json`, `/api/v1/openapi.json`, `/api/v2/openapi.json`):
// minified and without the generated file's header, compressed with br or gzip as the client accepts, with an ETag
// (304 on If-None-Match) and Cache-Control.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DoesNotExistError } from '../errors/errors';
import { compressedBody, sendCompressed, type CompressedBody } from '../http/compressed-body';
import type { AppContext } from '../http/state';
import { withApiScripts } from '../scripts/openapi-scripts';

/** Bodies remembered: the two documents, each with and without the API scripts of a moment. */
const MAX_VARIANTS = 8;

/** The generated file's header (generator/emit/openapi.ts), meant for the repository's readers, not API users. */
const GENERATED_MARKER = 'x-generated';

/** Clients may keep the document but must ask again (answered 304 while the ETag still matches). */
const CACHE_CONTROL = 'no-cache';

/** Answers with `<generatedDir>/openapi/v<version>.json` of the path's API version, read once, plus the API scripts. */
export function createOpenApiHandler(generatedDir: string): (ctx: AppContext) => Promise<void> {
  const files = new Map<string, Promise<string>>();
  const variants = new Map<string, CompressedBody>();

  function variantOf(text: string): CompressedBody {
    let found = variants.get(text);
    if (!found) {
      const served = JSON.parse(text) as Record<string, unknown>;
      delete served[GENERATED_MARKER];
      found = compressedBody(Buffer.from(JSON.stringify(served)));
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
    const served = await withApiScripts(ctx.state.site, ctx.state.version, generated);
    await sendCompressed(ctx, variantOf(served), 'application/json', CACHE_CONTROL);
  };
}
