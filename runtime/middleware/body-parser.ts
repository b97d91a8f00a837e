// createBodyParser: JSON and form bodies within the size limit; other content types are refused with 415.
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { RequestEntityTooLargeError, UnsupportedMediaTypeError } from '../errors/errors';

/** Options of the body parser. */
export interface BodyParserOptions {
  /** Largest accepted JSON or form body, in bytes. */
  maxBodySize: number;
}

const ACCEPTED = ['json', 'urlencoded', 'multipart', 'text/plain'];

/** Parses request bodies; a body with an unsupported content type is 415, one over the limit 413. */
export function createBodyParser(options: BodyParserOptions): Middleware {
  const parse = koaBody({
    json: true,
    urlencoded: true,
    multipart: false,
    text: false,
    jsonLimit: options.maxBodySize,
    formLimit: options.maxBodySize,
    jsonStrict: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE, HttpMethodEnum.GET],
  });
  return async function bodyParser(ctx, next) {
    const length = Number(ctx.get('content-length') || 0);
    const hasBody = length > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody) {
      if (length > options.maxBodySize) throw new RequestEntityTooLargeError(`Request body is larger than ${options.maxBodySize} bytes`);
      if (!ctx.is(ACCEPTED)) throw new UnsupportedMediaTypeError(`Content type ${ctx.get('content-type') || '(none)'} is not supported; send application/json`);
      if (ctx.is('text/plain')) throw new UnsupportedMediaTypeError('Content type text/plain is not accepted; send application/json');
    }
    await parse(ctx, next);
  };
}
