// `whitelist`: marks a controller method (TC39 decorator) or a module function (wrapper) as callable over HTTP.

/** An HTTP verb a method may be called with. */
export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Options of a whitelisted function (CONTRACT section 4). */
export interface WhitelistOptions {
  /** Verbs allowed; default GET, POST, PUT and DELETE as in Frappe. A function that changes data should say `['POST']`. */
  methods?: readonly HttpVerb[];
  /** Callable without credentials. */
  allowGuest?: boolean;
  /** At most `limit` calls per `seconds` per caller (user, or IP for guests). */
  rateLimit?: { limit: number; seconds: number };
  /** OAuth scopes a bearer token needs (default `all`). */
  scopes?: readonly string[];
}

/** Options with every default filled in, as dispatch reads them. */
export interface ResolvedWhitelist {
  methods: readonly HttpVerb[];
  allowGuest: boolean;
  rateLimit?: { limit: number; seconds: number };
  scopes: readonly string[];
}

/** Frappe's default verbs (PATCH is not among them). */
export const DEFAULT_VERBS: readonly HttpVerb[] = ['GET', 'POST', 'PUT', 'DELETE'];

const VERBS = new Set<string>(DEFAULT_VERBS);
const marks = new WeakMap<object, ResolvedWhitelist>();

function resolve(options: WhitelistOptions): ResolvedWhitelist {
  const methods = options.methods?.map((m) => m.toUpperCase() as HttpVerb) ?? DEFAULT_VERBS;
  for (const verb of methods)
    if (!VERBS.has(verb)) throw new TypeError(`whitelist: unknown HTTP verb ${verb}`);
  const limit = options.rateLimit;
  if (
    limit &&
    !(
      Number.isSafeInteger(limit.limit) &&
      limit.limit > 0 &&
      Number.isSafeInteger(limit.seconds) &&
      limit.seconds > 0
    )
  ) {
    throw new TypeError('whitelist: rateLimit needs a positive integer limit and seconds');
  }
  return {
    methods: Object.freeze([...new Set(methods)]),
    allowGuest: options.allowGuest === true,
    ...(limit ? { rateLimit: { limit: limit.limit, seconds: limit.seconds } } : {}),
    scopes: Object.freeze([...(options.scopes ?? ['all'])]),
  };
}

/** A TC39 method decorator produced by `whitelist(options)`. */
export type WhitelistDecorator = <This, Fn extends (this: This, ...args: any[]) => unknown>(
  method: Fn,
  context: ClassMethodDecoratorContext<This, Fn>,
) => void;

/**
 * `@whitelist(options)` on a controller method, or `whitelist(options, fn)` around a module function.
 * @example
 * export const stock = whitelist({ methods: ['GET'] }, async ({ sku }: { sku: string }) => 42);
 */
export function whitelist(options: WhitelistOptions): WhitelistDecorator;
export function whitelist<F extends (...args: any[]) => unknown>(options: WhitelistOptions, fn: F): F;
export function whitelist(options: WhitelistOptions, fn?: (...args: any[]) => unknown): unknown {
  const resolved = resolve(options);
  if (fn !== undefined) {
    if (typeof fn !== 'function') throw new TypeError('whitelist(options, fn): fn must be a function');
    marks.set(fn, resolved);
    return fn;
  }
  return (method: unknown, context: ClassMethodDecoratorContext) => {
    if (context.kind !== 'method' || context.static || typeof method !== 'function') {
      throw new TypeError('@whitelist applies to instance methods of a controller');
    }
    marks.set(method, resolved);
  };
}

/** The whitelist options of a function, or undefined when it is not whitelisted (then it is not callable: 404). */
export function whitelistOf(fn: unknown): ResolvedWhitelist | undefined {
  return typeof fn === 'function' ? marks.get(fn) : undefined;
}
