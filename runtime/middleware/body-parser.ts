// createBodyParser: JSON and form bodies within the size limit; multipart bodies are left to upload_file; other
// content types are refused with 415.
import type { Context, Middleware, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { BadRequestError, RequestEntityTooLargeError, UnsupportedMediaTypeError } from '../errors/errors';

/** Options of the body parser. */
export interface BodyParserOptions {
  /** Largest accepted JSON or form body, in bytes. */
  maxBodySize: number;
  /** Largest multipart body (the upload limit plus room for the other parts); the upload handler streams it itself. */
  maxUploadSize?: number;
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

/** Decodes UTF-8 strictly: a body with invalid bytes is refused instead of stored with U+FFFD in their place. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON is read as latin1 (one character per byte, so no byte is lost to a replacement character) and, when any byte
 * is not ASCII, decoded again as strict UTF-8 and parsed from that: ASCII bodies, nearly all of them, parse once.
 */
function redecodeJson(ctx: Context): void {
  const request = ctx.request;
  const raw = request.rawBody;
  if (typeof raw !== 'string' || !NON_ASCII.test(raw)) return;
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.from(raw, 'latin1'));
  } catch {
    throw new BadRequestError('The request body is not valid UTF-8');
  }
  // JSON.parse yields a JSON value, which koa-body's `request.body` type holds.
  request.body = JSON.parse(text);
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Parses request bodies; a body with an unsupported content type is 415, one over the limit 413. */
export function createBodyParser(options: BodyParserOptions): Middleware {
  const parsedMethods = [
    HttpMethodEnum.POST,
    HttpMethodEnum.PUT,
    HttpMethodEnum.PATCH,
    HttpMethodEnum.DELETE,
    HttpMethodEnum.GET,
  ];
  const parseJson = koaBody({
    json: true,
    urlencoded: false,
    multipart: false,
    text: false,
    jsonLimit: options.maxBodySize,
    jsonStrict: false,
    encoding: 'latin1',
    includeUnparsed: true,
    parsedMethods,
  });
  const parseForm = koaBody({
    json: false,
    urlencoded: true,
    multipart: false,
    text: false,
    formLimit: options.maxBodySize,
    parsedMethods,
  });
  const parsed = async (ctx: Context, next: Next) => {
    redecodeJson(ctx);
    if (nestedDeeperThan(ctx.request.body, MAX_DEPTH))
      throw new BadRequestError(`The request body nests deeper than ${MAX_DEPTH} levels`);
    await next();
  };
  return function bodyParser(ctx, next) {
    const length = Number(ctx.get('content-length') || 0);
    const hasBody = length > 0 || ctx.get('transfer-encoding') !== '';
    // Most GETs carry no body: nothing to parse (Frappe clients that send a JSON body on GET still get it parsed).
    if (!hasBody) return next();
    // Multipart bodies are uploads: left unread here, upload_file streams them to a temporary file.
    if (ctx.request.type === 'multipart/form-data') {
      const limit = options.maxUploadSize ?? options.maxBodySize;
      if (length > limit) throw new RequestEntityTooLargeError(`Request body is larger than ${limit} bytes`);
      return next();
    }
    if (length > options.maxBodySize)
      throw new RequestEntityTooLargeError(`Request body is larger than ${options.maxBodySize} bytes`);
    // Plain JSON, by far the most common body, needs no media-type matching of our own (koa-body does its own).
    if (ctx.request.type === 'application/json') return parseJson(ctx, () => parsed(ctx, next));
    if (!ctx.is(ACCEPTED))
      throw new UnsupportedMediaTypeError(
        `Content type ${ctx.get('content-type') || '(none)'} is not supported; send application/json`,
      );
    if (ctx.is('text/plain'))
      throw new UnsupportedMediaTypeError('Content type text/plain is not accepted; send application/json');
    return parseJson(ctx, () => parseForm(ctx, () => parsed(ctx, next)));
  };
}
