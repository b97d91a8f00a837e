// Runs one @node-oauth/oauth2-server call on a Koa request and turns the library's errors into OAuthError.
import OAuth2Server from '@node-oauth/oauth2-server';
import { InternalServerError, OAuthError } from '../errors/errors';
import { bodyObject } from '../http/params';
import type { AppContext } from '../http/state';

/** The library's view of the request: verb, headers, query and parsed body. */
export function libraryRequest(ctx: AppContext): OAuth2Server.Request {
  return new OAuth2Server.Request({
    method: ctx.method,
    headers: ctx.headers as Record<string, string>,
    query: { ...ctx.query } as Record<string, string>,
    body: bodyObject(ctx) ?? {},
  });
}

/** Runs `call`; a library error becomes the RFC error (status, code, description, WWW-Authenticate) it stands for. */
export async function runOAuth<T>(
  ctx: AppContext,
  call: (request: OAuth2Server.Request, response: OAuth2Server.Response) => Promise<T>,
): Promise<{ result: T; response: OAuth2Server.Response }> {
  const response = new OAuth2Server.Response({ headers: {} });
  try {
    return { result: await call(libraryRequest(ctx), response), response };
  } catch (err) {
    if (err instanceof OAuth2Server.ServerError) {
      const inner = (err as { inner?: unknown }).inner;
      throw inner instanceof Error ? inner : new InternalServerError('OAuth server error', { cause: err });
    }
    if (err instanceof OAuth2Server.OAuthError) {
      const headers: Record<string, string> = {};
      const www = (response.headers as Record<string, string> | undefined)?.['www-authenticate'];
      if (www) headers['WWW-Authenticate'] = www;
      throw new OAuthError(err.name, err.message, { status: err.code, headers, cause: err });
    }
    throw err;
  }
}
