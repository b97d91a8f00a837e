// createBodyParser: JSON and form bodies within the size limit; other content types are refused with 415.
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { BadRequestError, RequestEntityTooLargeError, UnsupportedMediaTypeError } from '../errors/errors';

/** Options of the body parser. */
export interface BodyParserOptions {
  /** Largest accepted JSON or form body, in bytes. */
  maxBodySize: number;
}

const ACCEPTED = ['json', 'urlencoded', 'multipart', 'text/plain'];

/** Deepest nesting of arrays and objects a body may have (deeper bodies overflow the stack in JSON.stringify and friends). */
const MAX_DEPTH = 64;

/** True when `value` nests arrays or objects deeper than `max` levels; iterative, so any depth is safe to check. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

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
    parsedMethods: [
      HttpMethodEnum.POST,
      HttpMethodEnum.PUT,
      HttpMethodEnum.PATCH,
      HttpMethodEnum.DELETE,
      HttpMethodEnum.GET,
    ],
  });
  return function bodyParser(ctx, next) {
    const length = Number(ctx.get('content-length') || 0);
    const hasBody = length > 0 || ctx.get('transfer-encoding') !== '';
    // Most GETs carry no body: nothing to parse (Frappe clients that send a JSON body on GET still get it parsed).
    if (!hasBody) return next();
    if (length > options.maxBodySize)
      throw new RequestEntityTooLargeError(`Request body is larger than ${options.maxBodySize} bytes`);
    // Plain JSON, by far the most common body, needs no media-type matching of our own (koa-body does its own).
    if (ctx.request.type !== 'application/json') {
      if (!ctx.is(ACCEPTED))
        throw new UnsupportedMediaTypeError(
          `Content type ${ctx.get('content-type') || '(none)'} is not supported; send application/json`,
        );
      if (ctx.is('text/plain'))
        throw new UnsupportedMediaTypeError('Content type text/plain is not accepted; send application/json');
    }
    return parse(ctx, async () => {
      if (nestedDeeperThan((ctx.request as { body?: unknown }).body, MAX_DEPTH))
        throw new BadRequestError(`The request body nests deeper than ${MAX_DEPTH} levels`);
      await next();
    });
  };
}
