// The typed client's runtime, copied as it is into generated/client/client.ts by generator/emit/client.ts: REST v2
// calls over `fetch` (no other dependency), typed by the generated DocType and method maps (generated/client/types.ts).

/** What the generated types describe of one DocType: the document, create and update bodies, its document methods. */
export interface DocTypeTypes {
  doc: object;
  create: object;
  update: object;
  methods: Record<string, MethodTypes>;
}

/** What the generated types describe of one whitelisted method: its argument object and its result. */
export interface MethodTypes {
  args: object;
  result: unknown;
}

/** The generated maps the client is typed by. */
export interface ClientTypes {
  doctypes: Record<string, DocTypeTypes>;
  methods: Record<string, MethodTypes>;
}

/** The body of an error answer (Frappe's keys; v2 adds `errors`). */
export interface ErrorBody {
  exc_type?: string;
  exception?: string;
  _server_messages?: string;
  errors?: { type: string; message: string }[];
  [key: string]: unknown;
}

/** An error answer: `status`, Frappe's `excType` and the body; a subclass per exc_type (generated/client/errors.ts). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly excType: string,
    readonly body: ErrorBody,
  ) {
    super(message);
    this.name = excType || 'ApiError';
  }
}

/** The error classes by exc_type the client throws (filled in by the generated errors module). */
export type ErrorClasses = Record<string, typeof ApiError>;

/** A subclass of `base` for one exc_type (the generated errors module makes one per class of the service). */
export function errorClass(excType: string, base: typeof ApiError): typeof ApiError {
  const made = class extends base {};
  Object.defineProperty(made, 'name', { value: excType });
  return made;
}

/** How requests authenticate: API keys (token or Basic), an OAuth bearer token, or a session from `login`. */
export type Auth =
  | { kind: 'token'; apiKey: string; apiSecret: string }
  | { kind: 'basic'; apiKey: string; apiSecret: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'none' };

/** `Authorization: token key:secret`. */
export const tokenAuth = (apiKey: string, apiSecret: string): Auth => ({ kind: 'token', apiKey, apiSecret });
/** `Authorization: Basic base64(key:secret)`. */
export const basicAuth = (apiKey: string, apiSecret: string): Auth => ({ kind: 'basic', apiKey, apiSecret });
/** `Authorization: Bearer <token>` (an OAuth access token). */
export const bearerAuth = (token: string): Auth => ({ kind: 'bearer', token });

/** Options of a client. */
export interface ClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  auth?: Auth;
  /** A key-source DocType the API keys belong to (`Svc-Authorization-Source`); default User. */
  keySource?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** An operator and the value it takes, for a field whose values are `T`. */
export type Operation<T> =
  | readonly ['=' | '!=' | '>' | '<' | '>=' | '<=', T]
  | readonly ['like' | 'not like', string]
  | readonly ['in' | 'not in', readonly T[]]
  | readonly ['between', readonly [T, T]]
  | readonly ['is', 'set' | 'not set'];

/** A condition on one field: a value (equality), or an operator with its value. */
export type Condition<T> = T | Operation<T>;

type Fieldname<D> = keyof D & string;

/** One condition as a list: `[field, operator, value]`. */
export type FilterTuple<D> = {
  [K in Fieldname<D>]: readonly [K, ...Operation<NonNullable<D[K]>>];
}[Fieldname<D>];

/** Filters on a DocType's fields: `{field: value | [operator, value]}` or a list of `[field, operator, value]`. */
export type Filters<D> = { [K in Fieldname<D>]?: Condition<NonNullable<D[K]>> } | readonly FilterTuple<D>[];

/** The fields a list may ask for (table fields have no column). */
export type ListField<D> = {
  [K in Fieldname<D>]: NonNullable<D[K]> extends readonly unknown[] ? never : K;
}[Fieldname<D>];

/** Options of a list: the answer's rows carry exactly the fields asked for (default `name`). */
export interface ListOptions<D, F extends ListField<D>> {
  fields?: readonly F[];
  filters?: Filters<D>;
  orFilters?: Filters<D>;
  /** `field [asc|desc]`, comma-separated. */
  orderBy?: string;
  start?: number;
  /**
   * Keyset paging: `''` for the first page, then the previous page's `nextCursor` (same orderBy; not with start).
   * A deep page then costs what the first does.
   */
  cursor?: string;
  /** Page size (default 20; the site's max_page_length caps it). */
  limit?: number;
}

/** A page of rows. */
export interface Page<R> {
  data: R[];
  hasNextPage: boolean;
  /** With `cursor`: the next page's cursor, null on the last page. */
  nextCursor?: string | null;
}

/** A row of a list that asked for fields `F` (every value may be null in a row, as the database holds it). */
export type Row<D, F extends keyof D> = { [K in F]: D[K] };

/** The DocType names a client knows. */
export type DocTypeName<T extends ClientTypes> = keyof T['doctypes'] & string;
type Doc<T extends ClientTypes, N extends DocTypeName<T>> = T['doctypes'][N]['doc'];

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The first user message of an error body, else its `exception`, else the status text. */
function messageOf(body: ErrorBody, status: number): string {
  try {
    const list: unknown = JSON.parse(body._server_messages ?? '[]');
    if (Array.isArray(list) && typeof list[0] === 'string') {
      const first: unknown = JSON.parse(list[0]);
      if (first && typeof first === 'object' && 'message' in first && typeof first.message === 'string')
        return first.message;
    }
  } catch {
    // not Frappe's shape: fall through
  }
  return body.exception ?? `HTTP ${status}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A typed REST v2 client. Create one with the generated `createClient`. */
export class Client<T extends ClientTypes> {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof globalThis.fetch;
  private auth: Auth;
  private sid: string | undefined;
  private csrfToken: string | undefined;

  constructor(
    private readonly options: ClientOptions,
    private readonly errorClasses: ErrorClasses,
    private readonly methodVerbs: Readonly<Record<string, readonly string[]>>,
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.auth = options.auth ?? { kind: 'none' };
  }

  /** Logs in with a password; later requests carry the session cookie, and writes its CSRF token. */
  async login(usr: string, pwd: string): Promise<{ fullName: string }> {
    const response = await this.send('POST', '/api/v2/method/login', { usr, pwd });
    const body = await this.read(response);
    const cookie = response.headers.get('set-cookie') ?? '';
    const sid = /(?:^|[;,]\s*)sid=([^;]+)/.exec(cookie)?.[1];
    if (sid) this.sid = sid;
    if (isObject(body) && typeof body.csrf_token === 'string') this.csrfToken = body.csrf_token;
    this.auth = { kind: 'none' };
    return { fullName: isObject(body) && typeof body.full_name === 'string' ? body.full_name : usr };
  }

  /** Ends the session `login` started. */
  async logout(): Promise<void> {
    await this.read(await this.send('POST', '/api/v2/method/logout', {}));
    this.sid = undefined;
    this.csrfToken = undefined;
  }

  /** Creates a document (201): the saved document as the server answers it. */
  async insert<N extends DocTypeName<T>>(doctype: N, body: T['doctypes'][N]['create']): Promise<Doc<T, N>> {
    return this.data(await this.send('POST', this.documentPath(doctype), body));
  }

  /** Reads a document by name. */
  async get<N extends DocTypeName<T>>(doctype: N, name: string): Promise<Doc<T, N>> {
    return this.data(await this.send('GET', this.documentPath(doctype, name)));
  }

  /** Changes some fields (PATCH): send `modified` as read to refuse a stale write (TimestampMismatchError). */
  async update<N extends DocTypeName<T>>(
    doctype: N,
    name: string,
    changes: T['doctypes'][N]['update'],
  ): Promise<Doc<T, N>> {
    return this.data(await this.send('PATCH', this.documentPath(doctype, name), changes));
  }

  /** Deletes a document. */
  async delete<N extends DocTypeName<T>>(doctype: N, name: string): Promise<void> {
    await this.data(await this.send('DELETE', this.documentPath(doctype, name)));
  }

  /** One page of rows with the fields asked for (default `name`). */
  async list<N extends DocTypeName<T>, F extends ListField<Doc<T, N>> = never>(
    doctype: N,
    options: ListOptions<Doc<T, N>, F> = {},
  ): Promise<Page<Row<Doc<T, N>, [F] extends [never] ? Extract<'name', keyof Doc<T, N>> : F>>> {
    const query: Record<string, unknown> = {
      fields: options.fields ?? ['name'],
      filters: options.filters,
      or_filters: options.orFilters,
      order_by: options.orderBy,
      start: options.start,
      cursor: options.cursor,
      limit: options.limit,
    };
    const body = await this.read(await this.send('GET', this.documentPath(doctype), undefined, query));
    if (!isObject(body) || !Array.isArray(body.data)) throw new TypeError('list: the answer holds no rows');
    const page: Page<never> = { data: body.data as never[], hasNextPage: body.has_next_page === true };
    if (options.cursor !== undefined)
      page.nextCursor = typeof body.next_cursor === 'string' ? body.next_cursor : null;
    return page;
  }

  /**
   * Every row matching, page by page (`for await`), by cursor: in orderBy's order then name's, each page as cheap as
   * the first however deep (orderBy may then name only plain fields of the DocType).
   */
  async *iterate<N extends DocTypeName<T>, F extends ListField<Doc<T, N>> = never>(
    doctype: N,
    options: Omit<ListOptions<Doc<T, N>, F>, 'start' | 'cursor'> = {},
  ): AsyncGenerator<Row<Doc<T, N>, [F] extends [never] ? Extract<'name', keyof Doc<T, N>> : F>> {
    const limit = options.limit ?? 100;
    let cursor: string | null | undefined = '';
    while (typeof cursor === 'string') {
      const page: Page<Row<Doc<T, N>, [F] extends [never] ? Extract<'name', keyof Doc<T, N>> : F>> =
        await this.list<N, F>(doctype, { ...options, cursor, limit });
      yield* page.data;
      cursor = page.hasNextPage ? page.nextCursor : null;
    }
  }

  /** The number of documents matching the filters. */
  async count<N extends DocTypeName<T>>(
    doctype: N,
    options: { filters?: Filters<Doc<T, N>>; orFilters?: Filters<Doc<T, N>> } = {},
  ): Promise<number> {
    const path = `/api/v2/doctype/${encodeURIComponent(doctype)}/count`;
    const query = { filters: options.filters, or_filters: options.orFilters };
    const value = await this.data(await this.send('GET', path, undefined, query));
    if (typeof value !== 'number') throw new TypeError('count: the answer is not a number');
    return value;
  }

  /** Calls a whitelisted method by its dotted path: typed arguments, typed result. */
  async call<P extends keyof T['methods'] & string>(
    path: P,
    args: T['methods'][P]['args'],
  ): Promise<T['methods'][P]['result']> {
    const verbs = this.methodVerbs[path] ?? ['POST'];
    const url = `/api/v2/method/${path}`;
    const response = verbs.includes('POST')
      ? await this.send('POST', url, args)
      : await this.send('GET', url, undefined, isObject(args) ? args : {});
    return this.data(response, true);
  }

  /**
   * Runs a whitelisted method of a stored document (`<DocType>/<name>/method/<method>`): typed arguments, its typed
   * result and the document as the method left it.
   */
  async runMethod<N extends DocTypeName<T>, M extends keyof T['doctypes'][N]['methods'] & string>(
    doctype: N,
    name: string,
    method: M,
    args: T['doctypes'][N]['methods'][M]['args'],
  ): Promise<{ result: T['doctypes'][N]['methods'][M]['result']; doc: Doc<T, N> }> {
    const verbs = this.methodVerbs[`${doctype}/${method}`] ?? ['POST'];
    const url = `${this.documentPath(doctype, name)}/method/${encodeURIComponent(method)}`;
    const response = verbs.includes('POST')
      ? await this.send('POST', url, args)
      : await this.send('GET', url, undefined, isObject(args) ? args : {});
    const body = await this.read(response);
    if (!isObject(body) || !Array.isArray(body.docs))
      throw new TypeError('runMethod: the answer holds no document');
    return this.trusted({ result: body.data, doc: body.docs[0] });
  }

  private documentPath(doctype: string, name?: string): string {
    const base = `/api/v2/document/${encodeURIComponent(doctype)}`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  private headers(method: string, hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (hasBody) headers['Content-Type'] = 'application/json';
    const auth = this.auth;
    if (auth.kind === 'token') headers.Authorization = `token ${auth.apiKey}:${auth.apiSecret}`;
    if (auth.kind === 'basic') headers.Authorization = `Basic ${base64(`${auth.apiKey}:${auth.apiSecret}`)}`;
    if (auth.kind === 'bearer') headers.Authorization = `Bearer ${auth.token}`;
    if ((auth.kind === 'token' || auth.kind === 'basic') && this.options.keySource)
      headers['Svc-Authorization-Source'] = this.options.keySource;
    if (this.sid) headers.Cookie = `sid=${this.sid}`;
    if (this.csrfToken && WRITE.has(method)) headers['X-Frappe-CSRF-Token'] = this.csrfToken;
    return headers;
  }

  private send(
    method: string,
    path: string,
    body?: unknown,
    query?: Record<string, unknown>,
  ): Promise<Response> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue;
      search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    const qs = search.toString();
    return this.fetchImpl(`${this.baseUrl}${path}${qs ? `?${qs}` : ''}`, {
      method,
      headers: this.headers(method, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'include',
    });
  }

  /** The JSON body of a success answer; an error answer throws its exc_type's class. */
  private async read(response: Response): Promise<unknown> {
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = { exception: text.slice(0, 200) };
    }
    if (response.ok) return body;
    const error: ErrorBody = isObject(body) ? body : {};
    const excType = typeof error.exc_type === 'string' ? error.exc_type : '';
    const Class = this.errorClasses[excType] ?? ApiError;
    throw new Class(messageOf(error, response.status), response.status, excType, error);
  }

  /** An answer's value as the generated types describe it (the tests validate the answers against the document). */
  private trusted<R>(value: unknown): R {
    return value as R;
  }

  /** The `data` of a success answer (`optional`: a method that returned nothing answers without it). */
  private async data<R>(response: Response, optional = false): Promise<R> {
    const body = await this.read(response);
    if (!isObject(body) || (!optional && !('data' in body))) throw new TypeError('the answer has no data');
    return this.trusted(body.data);
  }
}
