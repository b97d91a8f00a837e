// The shared parts of the OpenAPI documents: error responses by status, security schemes and the requirements per
// kind of operation, query parameters, servers.
import type { JsonSchema } from '../json-schema';
import { ref } from './openapi-schemas';

/** A JSON media type map. */
export const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** A success response. */
export const ok = (description: string, schema: JsonSchema) => ({ description, content: json(schema) });

const errorResponse = (description: string, headers?: Record<string, JsonSchema>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(ref('Error')),
});

/** The error responses (components.responses), by status. */
export const ERROR_RESPONSES: Record<string, [name: string, response: JsonSchema]> = {
  '400': [
    'BadRequest',
    errorResponse(
      'Invalid input: ValidationError and its subclasses (MandatoryError, LinkValidationError, …), CSRFTokenError',
    ),
  ],
  '401': [
    'Unauthorized',
    errorResponse('AuthenticationError: no credentials where they are needed, or wrong ones', {
      'WWW-Authenticate': { schema: { type: 'string' }, description: 'on a refused bearer token' },
    }),
  ],
  '403': ['Forbidden', errorResponse('PermissionError (or InsufficientScopeError for a bearer token)')],
  '404': ['NotFound', errorResponse('DoesNotExistError')],
  '405': [
    'MethodNotAllowed',
    errorResponse('MethodNotAllowedError: the verbs the path takes are in Allow', {
      Allow: { schema: { type: 'string' }, description: 'e.g. GET, POST' },
    }),
  ],
  '409': [
    'Conflict',
    errorResponse('DuplicateEntryError (the name is taken) or TimestampMismatchError (a stale modified)'),
  ],
  '413': [
    'PayloadTooLarge',
    errorResponse(
      'RequestEntityTooLargeError: the body is over max_body_size, or a document over max_child_rows',
    ),
  ],
  '415': [
    'UnsupportedMediaType',
    errorResponse('UnsupportedMediaTypeError: a body that is not JSON or a form'),
  ],
  '429': [
    'TooManyRequests',
    errorResponse('TooManyRequestsError: over the rate limit (or a locked login)', {
      'Retry-After': { schema: { type: 'integer' }, description: 'seconds' },
    }),
  ],
  '5XX': [
    'ServerError',
    errorResponse(
      'InternalServerError (500), or ServiceUnavailableError (503, with Retry-After) while the database or Redis is down',
      {
        'Retry-After': { schema: { type: 'integer' }, description: 'seconds (503)' },
      },
    ),
  ],
};

/** The `$ref` responses of the given statuses. */
export function errors(...statuses: string[]): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const status of [...statuses, '5XX']) {
    const entry = ERROR_RESPONSES[status];
    if (!entry) throw new Error(`generator/emit/openapi-parts.ts: no error response ${status}`);
    out[status] = { $ref: `#/components/responses/${entry[0]}` };
  }
  return out;
}

/** components.responses. */
export function responseComponents(): Record<string, JsonSchema> {
  return Object.fromEntries(Object.values(ERROR_RESPONSES));
}

/**
 * Security schemes. Token, Basic and bearer are each an `http` scheme (their own Authorization prefix), so generators
 * tell them apart; `keySource` and `csrf` are headers sent beside a credential.
 */
export const SECURITY_SCHEMES: JsonSchema = {
  token: {
    type: 'http',
    scheme: 'token',
    description: 'Authorization: token <api_key>:<api_secret> (keys from generate_keys)',
  },
  basic: {
    type: 'http',
    scheme: 'basic',
    description: 'Authorization: Basic base64(<api_key>:<api_secret>)',
  },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Authorization: Bearer <access token> from frappe.integrations.oauth2.get_token (scope all for documents)',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'sid',
    description: 'the session cookie set by login; writes also need the csrf header',
  },
  csrf: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Frappe-CSRF-Token',
    description:
      "the session's csrf_token (login answers it): needed on POST/PUT/PATCH/DELETE with the sid cookie",
  },
  keySource: {
    type: 'apiKey',
    in: 'header',
    name: 'Svc-Authorization-Source',
    description:
      'a key-source DocType whose rows hold the api_key/api_secret sent as token or Basic (default User)',
  },
};

/** Who may call an operation: credentials needed (reads or writes), optional (Guests too), or none read at all. */
export type Access = 'read' | 'write' | 'guest-read' | 'guest-write' | 'none';

const CREDENTIALS = [{ token: [] }, { basic: [] }, { bearer: [] }];
const KEY_SOURCES = [
  { token: [], keySource: [] },
  { basic: [], keySource: [] },
];

/** The security requirement of an operation; reads are the documents' default (left out of operations). */
export function security(access: Access): JsonSchema[] {
  if (access === 'none') return [];
  const session =
    access === 'read' || access === 'guest-read' ? [{ session: [] }] : [{ session: [], csrf: [] }];
  const guest = access === 'guest-read' || access === 'guest-write' ? [{}] : [];
  return [...CREDENTIALS, ...session, ...KEY_SOURCES, ...guest];
}

/** The security an operation states (none when it is the documents' default). */
export function operationSecurity(access: Access): { security?: JsonSchema[] } {
  return access === 'read' ? {} : { security: security(access) };
}

/** A query parameter carrying JSON text (`fields`, `filters`, …): typed by `schema`, sent JSON-encoded. */
export const jsonQuery = (name: string, description: string, schema: JsonSchema) => ({
  name,
  in: 'query',
  required: false,
  description: `${description} (JSON text)`,
  content: json(schema),
});

/** A plain query parameter. */
export const query = (name: string, description: string, schema: JsonSchema) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const FIELDS = jsonQuery(
  'fields',
  'the fields to answer: names, "*", "field as alias", "table.field", "count(name) as n", … (default ["name"])',
  { type: 'array', items: { type: 'string' } },
);
const FILTERS = jsonQuery('filters', 'conditions, all of which must hold', ref('Filters'));
const OR_FILTERS = jsonQuery('or_filters', 'conditions, one of which must hold', ref('Filters'));
const BOOL = { type: 'boolean' };
const COUNT = { type: 'integer', minimum: 0 };

/** Query parameters of a list, per API version (docs/queries.md). */
export const LIST_PARAMETERS: Record<1 | 2, JsonSchema[]> = {
  1: [
    FIELDS,
    FILTERS,
    OR_FILTERS,
    query('order_by', 'field [asc|desc], …', { type: 'string' }),
    query('group_by', 'field, …', { type: 'string' }),
    query('limit_start', 'offset', COUNT),
    query('limit_page_length', 'page size (0: up to max_page_length; default 20)', COUNT),
    query('limit', 'page size, when limit_page_length is absent', COUNT),
    query('as_dict', 'false: each row is a list of values in the order of fields', BOOL),
    jsonQuery('expand', 'Link fields whose values become the linked documents', {
      type: 'array',
      items: { type: 'string' },
    }),
  ],
  2: [
    FIELDS,
    FILTERS,
    OR_FILTERS,
    query('order_by', 'field [asc|desc], …', { type: 'string' }),
    query('group_by', 'field, …', { type: 'string' }),
    query('start', 'offset', COUNT),
    query(
      'cursor',
      "keyset paging: empty for the first page, then the previous answer's next_cursor (opaque; same order_by; not with start, group_by or aggregates)",
      { type: 'string' },
    ),
    query('limit', 'page size (default 20, at most max_page_length)', COUNT),
    query('as_dict', 'false: each row is a list of values in the order of fields', BOOL),
    jsonQuery('expand', 'Link fields whose values become the linked documents', {
      type: 'array',
      items: { type: 'string' },
    }),
    query('include', '"count": the answer adds count, the number of rows the filters match', {
      type: 'string',
      enum: ['count'],
    }),
  ],
};

/** Query parameters of a count. */
export const COUNT_PARAMETERS: JsonSchema[] = [FILTERS, OR_FILTERS];

/** `expand_links` of a get. */
export const EXPAND_LINKS = query(
  'expand_links',
  'true: Link values (also in child rows) become the linked documents',
  BOOL,
);

/** The documents' servers: the origin the service runs on (paths start with /api). */
export const SERVERS: JsonSchema[] = [
  {
    url: '{scheme}://{host}',
    description: 'the service (npm start: http://127.0.0.1:8000)',
    variables: {
      scheme: { default: 'http', enum: ['http', 'https'] },
      host: { default: '127.0.0.1:8000', description: 'host[:port]' },
    },
  },
];
