// The built-in methods every service answers (runtime/methods/builtins.ts), described for the OpenAPI documents.
import type { JsonSchema } from '../json-schema';

/** A built-in method as documented: dotted path, verbs, summary, argument and result schemas, who may call it. */
export interface BuiltinMethodDoc {
  path: string;
  verbs: string[];
  summary: string;
  args: JsonSchema;
  /** The value in `message` (v1) / `data` (v2); absent: the method answers no value (an empty envelope). */
  result?: JsonSchema;
  /** The whole answer, for methods that answer without the envelope (login, run_doc_method, the OAuth token). */
  raw?: JsonSchema;
  /** The body is multipart/form-data (an upload), not JSON or a urlencoded form. */
  multipart?: boolean;
  /** `required`: no credentials are read (ping, login); `optional`: a Guest may call it; default: credentials needed. */
  guest?: 'required' | 'optional';
  /** False: a session needs no CSRF token (the method starts the session or checks the token itself). */
  csrf?: boolean;
  /** The method counts calls and answers 429 (login's lockout). */
  rateLimited?: boolean;
  /** Arguments that travel as JSON text in a query string (described as `content: application/json`). */
  jsonArgs?: string[];
  /** Only v2 answers this path (`User/generate_keys`). */
  v2Only?: boolean;
}

const args = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
});
const doctype = { type: 'string', description: 'DocType name' };
const jsonText = (description: string, schema: JsonSchema): JsonSchema => ({
  description: `${description} (JSON text in a query string)`,
  ...schema,
});
const FILTERS: JsonSchema = { $ref: '#/components/schemas/Filters' };
const NAMES: JsonSchema = { type: 'array', items: { type: 'string' } };
/** A document (or a body) of any DocType: `doctype` and the keys named in `required`, any fields. */
const docBody = (required: string[]): JsonSchema => ({
  type: 'object',
  required,
  properties: Object.fromEntries(required.map((k) => [k, { type: 'string' }])),
  additionalProperties: true,
});
const anyDoc = (description: string): JsonSchema => ({
  type: 'object',
  description,
  required: ['doctype'],
  properties: { doctype: { type: 'string' } },
  additionalProperties: true,
});
const KEYS: JsonSchema = {
  type: 'object',
  required: ['api_key', 'api_secret'],
  properties: { api_key: { type: 'string' }, api_secret: { type: 'string', description: 'shown once' } },
};
const ROWS: JsonSchema = {
  type: 'array',
  items: {
    anyOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
    ],
  },
};
const UPLOAD = {
  verbs: ['post'],
  summary:
    'Upload a file (multipart), or attach a File of this site again by file_url; answers the File document',
  multipart: true,
  guest: 'optional' as const,
  csrf: false,
  result: { $ref: '#/components/schemas/File' },
  args: args({
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description: 'the file (a form part)',
    },
    file_name: { type: 'string', description: "stored name (sanitised); default: the part's file name" },
    is_private: {
      type: 'string',
      enum: ['0', '1'],
      description: '1: served only to those who may read the File',
    },
    doctype: { type: 'string', description: 'DocType of the document to attach to (needs write on it)' },
    docname: { type: 'string', description: 'name of the document to attach to' },
    fieldname: {
      type: 'string',
      description: 'the Attach field the file is for (stored as attached_to_field)',
    },
    folder: {
      type: 'string',
      description: 'an existing folder (a File with is_folder: Home, Home/Attachments, Home/…); default Home',
    },
    file_url: {
      type: 'string',
      description: '/files/… or /private/files/… of a File you may read (never fetched)',
    },
    optimize: {
      type: 'string',
      description: 'accepted, ignored: images are stored as sent (no image library; see the README)',
    },
    csrf_token: { type: 'string', description: 'session CSRF token (or the X-Frappe-CSRF-Token header)' },
  }),
};
const GENERATE_KEYS = {
  verbs: ['post'],
  summary: 'Generate API key and secret for a user (System Manager)',
  args: args({ user: { type: 'string' } }, ['user']),
  result: KEYS,
};
const PING = {
  verbs: ['get', 'post', 'put', 'delete'],
  summary: 'Liveness check: returns "pong"',
  args: args({}),
  guest: 'required' as const,
  result: { type: 'string', const: 'pong' },
};

/** Every built-in method (the documents sort their paths). */
const DATA_IMPORT = 'frappe.core.doctype.data_import.data_import';
const FILE_ANSWER: JsonSchema = { type: 'string', description: 'the file (CSV text, or XLSX bytes)' };
const IMPORT_NAME = args({ data_import_name: { type: 'string', description: 'the Data Import' } }, [
  'data_import_name',
]);
/** The Data Import methods (runtime/data-import). */
const DATA_IMPORT_DOCS: BuiltinMethodDoc[] = [
  {
    path: `${DATA_IMPORT}.download_template`,
    verbs: ['get', 'post'],
    summary: 'The import template of a DocType (CSV or Excel), blank or with documents the caller may read',
    jsonArgs: ['export_fields', 'export_filters'],
    raw: FILE_ANSWER,
    args: args(
      {
        doctype,
        export_fields: jsonText('list of column keys, or {DocType: [fields], <table field>: [fields]}', {}),
        export_records: { type: 'string', enum: ['blank_template', '5_records', 'all', 'by_filter'] },
        export_filters: jsonText('filters (with by_filter)', FILTERS),
        file_type: { type: 'string', enum: ['CSV', 'Excel'] },
      },
      ['doctype'],
    ),
  },
  {
    path: `${DATA_IMPORT}.get_preview_from_template`,
    verbs: ['get', 'post'],
    summary: 'Every document of the attached file checked through the document path; nothing is written',
    args: args(
      {
        data_import: { type: 'string', description: 'the Data Import' },
        import_file: { type: 'string', description: 'file_url of another attached file to check' },
      },
      ['data_import'],
    ),
    result: { type: 'object', additionalProperties: true },
  },
  {
    path: `${DATA_IMPORT}.form_start_import`,
    verbs: ['post'],
    summary: 'Start the import as a background job (progress: GET /api/v2/job/{job_id})',
    args: args({ data_import: { type: 'string' } }, ['data_import']),
    result: {
      type: 'object',
      properties: { job_id: { type: 'string' }, payload_count: { type: 'integer' } },
    },
  },
  {
    path: `${DATA_IMPORT}.get_import_status`,
    verbs: ['get', 'post'],
    summary: 'Status and counts of an import',
    args: IMPORT_NAME,
    result: { type: 'object', additionalProperties: true },
  },
  {
    path: `${DATA_IMPORT}.download_errored_template`,
    verbs: ['get', 'post'],
    summary: 'The header and the lines of the documents that failed, as CSV, to fix and import again',
    args: IMPORT_NAME,
    raw: FILE_ANSWER,
  },
];

export const BUILTIN_METHOD_DOCS: readonly BuiltinMethodDoc[] = [
  ...DATA_IMPORT_DOCS,
  { path: 'upload_file', ...UPLOAD },
  { path: 'frappe.handler.upload_file', ...UPLOAD },
  {
    path: 'frappe.desk.form.load.get_docinfo',
    verbs: ['get', 'post'],
    summary:
      "A document's Versions, newest first, for anyone who may read it; values of fields above the reader's permlevel left out",
    args: args({ doctype, name: { type: 'string' } }, ['doctype', 'name']),
    result: {
      type: 'object',
      required: ['versions'],
      properties: {
        versions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'owner', 'creation', 'data'],
            properties: {
              name: { type: 'string' },
              owner: { type: 'string' },
              creation: { type: 'string' },
              data: {
                type: 'string',
                description: "Frappe's diff as JSON text: changed, added, removed, row_changed",
              },
            },
          },
        },
      },
    },
  },
  {
    path: 'frappe.core.doctype.deleted_document.deleted_document.restore',
    verbs: ['post'],
    summary: 'Insert a Deleted Document again under its old name, as the caller (409 when the name is taken)',
    args: args({ name: { type: 'string', description: 'the Deleted Document' } }, ['name']),
  },
  {
    path: 'frappe.core.doctype.deleted_document.deleted_document.bulk_restore',
    verbs: ['post'],
    summary: 'Restore each Deleted Document of docnames on its own; answers {restored, invalid, failed}',
    args: args({ docnames: NAMES }, ['docnames']),
    result: {
      type: 'object',
      required: ['restored', 'invalid', 'failed'],
      properties: { restored: NAMES, invalid: NAMES, failed: NAMES },
    },
  },
  {
    path: 'frappe.core.api.file.create_new_folder',
    verbs: ['post'],
    summary:
      'Make a folder (a File with is_folder, named <folder>/<file_name>) in an existing folder; an existing one is answered as it is',
    args: args(
      {
        file_name: { type: 'string', description: "the new folder's name" },
        folder: { type: 'string', description: 'the parent folder (Home, Home/…)' },
      },
      ['file_name', 'folder'],
    ),
    result: { $ref: '#/components/schemas/File' },
  },
  {
    path: 'frappe.integrations.oauth2.get_token',
    guest: 'required',
    csrf: false,
    raw: {
      type: 'object',
      description: 'RFC 6749 section 5.1 (errors: section 5.2, {error, error_description})',
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string' },
        expires_in: { type: 'integer' },
        refresh_token: { type: 'string' },
        scope: { type: 'string' },
      },
      additionalProperties: true,
    },
    verbs: ['post'],
    summary: 'OAuth 2.0 token endpoint (RFC 6749: form body, answers and errors without the envelope)',
    args: args(
      {
        grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
        client_id: { type: 'string' },
        client_secret: { type: 'string' },
        scope: { type: 'string' },
        code: { type: 'string' },
        redirect_uri: { type: 'string' },
        code_verifier: { type: 'string' },
        refresh_token: { type: 'string' },
      },
      ['grant_type'],
    ),
  },
  {
    path: 'frappe.auth.get_logged_user',
    verbs: ['get', 'post', 'put', 'delete'],
    summary: 'The user the request is authenticated as',
    args: args({}),
    result: { type: 'string' },
  },
  {
    path: 'frappe.client.delete',
    verbs: ['post', 'delete'],
    summary: 'Delete a document',
    args: args({ doctype, name: { type: 'string' } }, ['doctype', 'name']),
  },
  {
    path: 'frappe.client.get',
    result: anyDoc('The document'),
    verbs: ['get', 'post', 'put', 'delete'],
    summary: "One document by name, or the first matching filters (a Single's without either)",
    args: args({ doctype, name: { type: 'string' }, filters: jsonText('filters', FILTERS) }, ['doctype']),
    jsonArgs: ['filters'],
  },
  {
    path: 'frappe.client.get_count',
    result: { type: 'integer', minimum: 0 },
    verbs: ['get', 'post', 'put', 'delete'],
    summary: 'Number of documents matching filters',
    args: args({ doctype, filters: jsonText('list or object of filters', FILTERS) }, ['doctype']),
    jsonArgs: ['filters'],
  },
  {
    path: 'frappe.client.get_list',
    jsonArgs: ['fields', 'filters'],
    result: ROWS,
    verbs: ['get', 'post', 'put', 'delete'],
    summary: 'A page of documents',
    args: args(
      {
        doctype,
        fields: jsonText('list of fields', NAMES),
        filters: jsonText('list or object of filters', FILTERS),
        order_by: { type: 'string' },
        limit_start: { type: 'integer', minimum: 0 },
        limit_page_length: { type: 'integer', minimum: 0 },
      },
      ['doctype'],
    ),
  },
  {
    path: 'frappe.client.get_value',
    jsonArgs: ['fieldname', 'filters'],
    result: {
      description:
        '{fieldname: value} (as_dict; {} when nothing matches), else the value of one field or the list of several (absent when nothing matches)',
    },
    verbs: ['get', 'post', 'put', 'delete'],
    summary: '{ <fieldname>: <value> } of the first matching document',
    args: args(
      {
        doctype,
        fieldname: jsonText('a field name or a list of them', { anyOf: [{ type: 'string' }, NAMES] }),
        filters: jsonText('a name, or filters', { anyOf: [{ type: 'string' }, FILTERS] }),
        as_dict: { type: 'boolean', default: true },
      },
      ['doctype'],
    ),
  },
  {
    path: 'frappe.client.cancel',
    result: anyDoc('The cancelled document'),
    verbs: ['post', 'put'],
    summary: 'Cancel a submitted document',
    args: args({ doctype, name: { type: 'string' } }, ['doctype', 'name']),
  },
  {
    path: 'frappe.client.get_single_value',
    result: { description: 'the field value (null when unset)' },
    verbs: ['get', 'post', 'put', 'delete'],
    summary: 'One field of a Single DocType',
    args: args({ doctype, field: { type: 'string' } }, ['doctype', 'field']),
  },
  {
    path: 'frappe.desk.search.search_link',
    result: {
      type: 'array',
      items: {
        type: 'object',
        required: ['value', 'description'],
        properties: { value: { type: 'string' }, description: { type: 'string' } },
      },
    },
    verbs: ['get', 'post', 'put', 'delete'],
    summary:
      "Link search: documents whose name or search_fields contain txt, as {value, description} (the search fields' values)",
    args: args(
      {
        doctype,
        txt: { type: 'string' },
        filters: jsonText('list or object of filters', FILTERS),
        page_length: { type: 'integer', minimum: 1, maximum: 500, default: 10 },
      },
      ['doctype'],
    ),
    jsonArgs: ['filters'],
  },
  {
    path: 'frappe.client.insert',
    result: anyDoc('The saved document'),
    verbs: ['post', 'put'],
    summary: 'Insert a document (200, like every method)',
    args: args({ doc: docBody(['doctype']) }, ['doc']),
  },
  {
    path: 'frappe.client.insert_many',
    result: { type: 'array', items: { type: 'string' }, description: 'the new names' },
    verbs: ['post', 'put'],
    summary:
      'Insert up to 200 documents (each with its doctype) in one transaction, all or nothing; returns the names',
    args: args({ docs: { type: 'array', items: docBody(['doctype']) } }, ['docs']),
  },
  {
    path: 'frappe.client.bulk_update',
    result: {
      type: 'object',
      required: ['failed_docs'],
      properties: {
        failed_docs: {
          type: 'array',
          items: { type: 'object', properties: { doc: {}, exc: { type: 'string' } } },
        },
      },
    },
    verbs: ['post', 'put'],
    summary:
      'Save each doc (doctype, docname, fields) in a savepoint of its own (a failed doc changes nothing); returns {failed_docs: [{doc, exc}]}',
    args: args({ docs: { type: 'array', items: docBody(['doctype', 'docname']) } }, ['docs']),
  },
  {
    path: 'frappe.client.save',
    result: anyDoc('The saved document'),
    verbs: ['post', 'put'],
    summary: 'Save a document (doc with doctype and name)',
    args: args({ doc: docBody(['doctype', 'name']) }, ['doc']),
  },
  {
    path: 'frappe.client.submit',
    result: anyDoc('The submitted document'),
    verbs: ['post', 'put'],
    summary: 'Save a document (doc with doctype and name) and submit it',
    args: args({ doc: docBody(['doctype', 'name']) }, ['doc']),
  },
  {
    path: 'frappe.client.set_value',
    result: anyDoc('The saved document'),
    verbs: ['post', 'put'],
    summary: 'Set one field, or several with a fieldname object',
    args: args({ doctype, name: { type: 'string' }, fieldname: { type: ['string', 'object'] }, value: {} }, [
      'doctype',
      'name',
      'fieldname',
    ]),
  },
  { path: 'frappe.core.doctype.user.user.generate_keys', ...GENERATE_KEYS },
  { path: 'User/generate_keys', ...GENERATE_KEYS, v2Only: true },
  {
    path: 'login',
    guest: 'required',
    csrf: false,
    rateLimited: true,
    raw: {
      type: 'object',
      required: ['message', 'home_page', 'full_name', 'csrf_token'],
      properties: {
        message: { type: 'string', const: 'Logged In' },
        home_page: { type: 'string' },
        full_name: { type: 'string' },
        csrf_token: {
          type: 'string',
          description: 'send it as X-Frappe-CSRF-Token on writes with the sid cookie',
        },
      },
    },
    verbs: ['post'],
    summary: 'Log in with usr/pwd; sets the sid cookie',
    args: args({ usr: { type: 'string' }, pwd: { type: 'string' } }, ['usr', 'pwd']),
  },
  { path: 'logout', verbs: ['post'], summary: 'End the current session', args: args({}), guest: 'optional' },
  { path: 'ping', ...PING },
  { path: 'frappe.ping', ...PING },
  {
    path: 'run_doc_method',
    guest: 'optional',
    raw: {
      type: 'object',
      description: 'the result in message (v1) / data (v2), absent when the method returns nothing',
      required: ['docs'],
      properties: {
        message: {},
        data: {},
        docs: { type: 'array', items: anyDoc('The document after the method ran') },
      },
    },
    verbs: ['get', 'post'],
    summary: 'Run a whitelisted method on a document sent with the request (answers data and docs)',
    args: args(
      {
        method: { type: 'string' },
        document: { type: ['object', 'string'], description: 'the document, with doctype' },
        kwargs: { type: ['object', 'string'] },
      },
      ['method', 'document'],
    ),
  },
];
