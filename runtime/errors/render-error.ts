// The one place an error becomes an HTTP response body: Frappe's v1 shape, plus `errors` in v2.
import {
  AppError,
  InternalServerError,
  OAuthError,
  RequestEntityTooLargeError,
  BadRequestError,
  UnsupportedMediaTypeError,
} from './errors';

/** What the renderer needs to know about the request. */
export interface RenderOptions {
  version: 1 | 2;
  developerMode: boolean;
}

/** A rendered error: status, headers and JSON body. */
export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Maps foreign errors (body parser, JSON syntax) onto the hierarchy; anything unknown becomes a 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; message?: unknown };
  const status =
    typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413) return new RequestEntityTooLargeError('Request body is too large', { cause: err });
  if (status === 415) return new UnsupportedMediaTypeError('Unsupported content type', { cause: err });
  if (status === 400 && (e?.type === 'entity.parse.failed' || err instanceof SyntaxError)) {
    return new BadRequestError('Invalid JSON in request body', { cause: err });
  }
  if (status === 400) return new BadRequestError('Invalid request', { cause: err });
  return new InternalServerError('Internal Server Error', { cause: err });
}

/** Renders an error as Frappe does: `exc_type`, `exception`, `_server_messages`; v2 adds `errors`. */
export function renderError(err: unknown, options: RenderOptions): RenderedError {
  const error = toAppError(err);
  if (error instanceof OAuthError) {
    // RFC 6749 section 5.2: the OAuth endpoints answer `{error, error_description}`, never cached.
    const body: Record<string, unknown> = { error: error.error };
    if (error.message) body.error_description = error.message;
    return { status: error.status, headers: { 'Cache-Control': 'no-store', ...error.headers }, body };
  }
  const internal = error instanceof InternalServerError;
  const message = internal && !options.developerMode ? 'Internal Server Error' : error.message;
  const serverMessage: Record<string, unknown> = { message, indicator: 'red' };
  if (error.title) serverMessage.title = error.title;
  const body: Record<string, unknown> = {
    ...error.response,
    exc_type: error.excType,
    exception: message ? `${error.excType}: ${message}` : error.excType,
    _server_messages: JSON.stringify(message ? [JSON.stringify(serverMessage)] : []),
  };
  if (options.developerMode) {
    const source = internal && error.cause instanceof Error ? error.cause : error;
    body.exc = JSON.stringify([source.stack ?? String(source)]);
  }
  if (options.version === 2) body.errors = [{ type: error.excType, message }];
  return { status: error.status, headers: error.headers, body };
}
