// Serves the generated OpenAPI documents (rows `/api/openapi.json`, `/api/v1/openapi.json`, `/api/v2/openapi.json`).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DoesNotExistError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { withApiScripts } from '../scripts/openapi-scripts';

/** Answers with `<generatedDir>/openapi/v<version>.json` of the path's API version, read once, plus the API scripts. */
export function createOpenApiHandler(generatedDir: string): (ctx: AppContext) => Promise<void> {
  const cache = new Map<string, Promise<string>>();
  return async function serveOpenApi(ctx) {
    const file = `v${ctx.state.version}.json`;
    let text = cache.get(file);
    if (!text) {
      text = readFile(path.resolve(generatedDir, 'openapi', file), 'utf8');
      cache.set(file, text);
    }
    let body: string;
    try {
      body = await text;
    } catch {
      cache.delete(file);
      throw new DoesNotExistError('OpenAPI document not generated: run npm run generate');
    }
    ctx.body = await withApiScripts(ctx.state.site, ctx.state.version, body);
    ctx.type = 'application/json';
  };
}
