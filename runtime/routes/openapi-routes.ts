// Serves the generated OpenAPI documents at /api/v1/openapi.json and /api/v2/openapi.json.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context, Middleware } from 'koa';
import { DoesNotExistError } from '../errors/errors';
import type { AppContext } from '../http/state';

/** Answers GET /api/v1/openapi.json and /api/v2/openapi.json from `<generatedDir>/openapi/`, read once. */
export function createOpenApiRoutes(generatedDir: string): Middleware {
  const cache = new Map<string, Promise<string>>();
  const paths: Record<string, string> = { '/api/v1/openapi.json': 'v1.json', '/api/openapi.json': 'v1.json', '/api/v2/openapi.json': 'v2.json' };
  return function openApiRoutes(ctx, next) {
    const urlPath = (ctx as AppContext).state.path;
    // endsWith first: a keyed read with the request's fresh path string hashes it.
    const file = urlPath.endsWith('/openapi.json') ? paths[urlPath] : undefined;
    if (!file || ctx.method !== 'GET') return next();
    return serve(ctx, file);
  };

  async function serve(ctx: Context, file: string): Promise<void> {
    let text = cache.get(file);
    if (!text) {
      text = readFile(path.resolve(generatedDir, 'openapi', file), 'utf8');
      cache.set(file, text);
    }
    try {
      ctx.body = await text;
    } catch {
      cache.delete(file);
      throw new DoesNotExistError('OpenAPI document not generated: run npm run generate');
    }
    ctx.type = 'application/json';
  }
}
