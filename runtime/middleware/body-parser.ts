// createBodyParser: JSON and form bodies within the size limit; multipart bodies are left to upload_file; other
// content types are refused with 415. A plain JSON body with a Content-Length is read and parsed here; chunked,
// compressed and form bodies go through koa-body, loaded by the first such body (loading it loads zod for its options'
// schema: 3 MB of heap a process that only ever reads plain JSON would keep; see README, Memory).
import type { IncomingMessage } from 'node:http';
import * as Bourne from '@hapi/bourne';
import type { Context, Middleware, Next } from 'koa';
import type * as KoaBody from 'koa-body';
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

/** A parsed JSON body, as koa-body types `ctx.request.body`. */
type ParsedBody = NonNullable<Context['request']['body']>;

/**
 * Parses JSON text as koa-body does (not strict, through @hapi/bourne, which co-body uses too): a syntax error or an own
 * `__proto__` key at any depth is 400 Invalid JSON.
 */
function parseJson(text: string): ParsedBody {
  try {
    return Bourne.parse(text, { protoAction: 'error' }) as ParsedBody;
  } catch (err) {
    throw new BadRequestError('Invalid JSON in request body', { cause: err });
  }
}

/**
 * Reads a body of `length` bytes (its Content-Length, already within the limit) as latin1 text: what raw-body did for
 * koa-body, with its failures answered as they were (a client that aborts, or a body of another length, is 400; a
 * stream error is passed on) and the stream paused after one.
 */
function readLatin1(req: IncomingMessage, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!req.readable) {
      reject(new Error('stream is not readable'));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('aborted', onAborted);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', cleanup);
    };
    const fail = (err: Error) => {
      cleanup();
      req.unpipe();
      req.pause();
      reject(err);
    };
    const onAborted = () => fail(new BadRequestError('Invalid request'));
    const onError = (err: Error) => fail(err);
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (received !== length) return fail(new BadRequestError('Invalid request'));
      cleanup();
      resolve((chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('latin1'));
    };
    req.on('aborted', onAborted);
    req.on('close', cleanup);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Methods whose body is parsed (a body of any other is left unread). */
const PARSED_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] as const;
const PARSED = new Set<string>(PARSED_METHODS);

/** koa-body's parsers for the bodies the plain JSON path does not read. */
interface KoaBodyParsers {
  json: Middleware;
  form: Middleware;
}

/** Makes koa-body's JSON and form parsers, loading koa-body (first call only: require caches it). */
function koaBodyParsers(maxBodySize: number): KoaBodyParsers {
  const { koaBody, HttpMethodEnum } = require('koa-body') as typeof KoaBody;
  const parsedMethods = PARSED_METHODS.map((method) => HttpMethodEnum[method]);
  return {
    json: koaBody({
      json: true,
      urlencoded: false,
      multipart: false,
      text: false,
      jsonLimit: maxBodySize,
      jsonStrict: false,
      encoding: 'latin1',
      includeUnparsed: true,
      parsedMethods,
    }),
    form: koaBody({
      json: false,
      urlencoded: true,
      multipart: false,
      text: false,
      formLimit: maxBodySize,
      parsedMethods,
    }),
  };
}

/** Parses request bodies; a body with an unsupported content type is 415, one over the limit 413. */
export function createBodyParser(options: BodyParserOptions): Middleware {
  let koaBodies: KoaBodyParsers | undefined;
  const parseJsonBody = (ctx: Context, next: Next) =>
    (koaBodies ??= koaBodyParsers(options.maxBodySize)).json(ctx, next);
  const parseForm = (ctx: Context, next: Next) =>
    (koaBodies ??= koaBodyParsers(options.maxBodySize)).form(ctx, next);
  const parsed = async (ctx: Context, next: Next) => {
    redecodeJson(ctx);
    // Every body the API takes is an object (a document's fields, a method's arguments, `{docs}`, `{names}`): another
    // JSON value is refused here, not read as no fields (an update of `[1, 2]` or `null` saved the document unchanged).
    const body: unknown = ctx.request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadRequestError('The request body must be a JSON object');
    if (nestedDeeperThan(body, MAX_DEPTH))
      throw new BadRequestError(`The request body nests deeper than ${MAX_DEPTH} levels`);
    await next();
  };
  const readJsonBody = async (ctx: Context, length: number, next: Next) => {
    const raw = await readLatin1(ctx.req, length);
    const request = ctx.request;
    request.body = parseJson(raw);
    request.rawBody = raw;
    return parsed(ctx, next);
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
    if (ctx.request.type === 'application/json') {
      // Plain JSON with a length and no content encoding, by far the most common body, is read here: koa-body matched
      // the media type four times and copied its options on every request (4-8 us per request, measured alone).
      if (
        length > 0 &&
        ctx.req.headers['content-encoding'] === undefined &&
        ctx.get('transfer-encoding') === ''
      )
        return PARSED.has(ctx.method) ? readJsonBody(ctx, length, next) : next();
      return parseJsonBody(ctx, () => parsed(ctx, next));
    }
    if (!ctx.is(ACCEPTED))
      throw new UnsupportedMediaTypeError(
        `Content type ${ctx.get('content-type') || '(none)'} is not supported; send application/json`,
      );
    if (ctx.is('text/plain'))
      throw new UnsupportedMediaTypeError('Content type text/plain is not accepted; send application/json');
    return parseJsonBody(ctx, () => parseForm(ctx, () => parsed(ctx, next)));
  };
}
