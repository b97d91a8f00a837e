// The built-in methods every service answers (runtime/methods/builtins.ts), described for the OpenAPI documents.
import type { JsonSchema } from '../json-schema';

/** A built-in method as documented: dotted path, verbs, summary and argument schema. */
export interface BuiltinMethodDoc {
  path: string;
  verbs: string[];
  summary: string;
  args: JsonSchema;
  /** The body is multipart/form-data (an upload), not JSON or a urlencoded form. */
  multipart?: boolean;
}

const args = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
});
const doctype = { type: 'string', description: 'DocType name' };
const jsonText = (description: string): JsonSchema => ({
  description: `${description} (JSON text in a query string)`,
});

/** Every built-in method (the documents sort their paths). */
export const BUILTIN_METHOD_DOCS: readonly BuiltinMethodDoc[] = [
  {
    path: 'upload_file',
    verbs: ['post'],
    summary:
      'Upload a file (multipart), or attach a File of this site again by file_url; answers the File document',
    multipart: true,
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
      folder: { type: 'string', description: 'folder (default Home)' },
      file_url: {
        type: 'string',
        description: '/files/… or /private/files/… of a File you may read (never fetched)',
      },
      optimize: { type: 'string', description: 'accepted, ignored (images are stored as sent)' },
      csrf_token: { type: 'string', description: 'session CSRF token (or the X-Frappe-CSRF-Token header)' },
    }),
  },
  {
    path: 'frappe.integrations.oauth2.get_token',
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
  { path: 'frappe.auth.get_logged_user', verbs: ['get'], summary: 'The session user', args: args({}) },
  {
    path: 'frappe.client.delete',
    verbs: ['post', 'delete'],
    summary: 'Delete a document',
    args: args({ doctype, name: { type: 'string' } }, ['doctype', 'name']),
  },
  {
    path: 'frappe.client.get',
    verbs: ['get', 'post'],
    summary: 'One document by name, or the first matching filters',
    args: args({ doctype, name: { type: 'string' }, filters: jsonText('filters') }, ['doctype']),
  },
  {
    path: 'frappe.client.get_count',
    verbs: ['get', 'post'],
    summary: 'Number of documents matching filters',
    args: args({ doctype, filters: jsonText('list or object of filters') }, ['doctype']),
  },
  {
    path: 'frappe.client.get_list',
    verbs: ['get', 'post'],
    summary: 'A page of documents',
    args: args(
      {
        doctype,
        fields: jsonText('list of fields'),
        filters: jsonText('list or object of filters'),
        order_by: { type: 'string' },
        limit_start: { type: 'integer', minimum: 0 },
        limit_page_length: { type: 'integer', minimum: 0 },
      },
      ['doctype'],
    ),
  },
  {
    path: 'frappe.client.get_value',
    verbs: ['get', 'post'],
    summary: '{ <fieldname>: <value> } of the first matching document',
    args: args(
      {
        doctype,
        fieldname: jsonText('a field name or a list of them'),
        filters: jsonText('a name, or filters'),
        as_dict: { type: 'boolean', default: true },
      },
      ['doctype'],
    ),
  },
  {
    path: 'frappe.client.cancel',
    verbs: ['post', 'put'],
    summary: 'Cancel a submitted document',
    args: args({ doctype, name: { type: 'string' } }, ['doctype', 'name']),
  },
  {
    path: 'frappe.client.get_single_value',
    verbs: ['get', 'post'],
    summary: 'One field of a Single DocType',
    args: args({ doctype, field: { type: 'string' } }, ['doctype', 'field']),
  },
  {
    path: 'frappe.client.insert',
    verbs: ['post', 'put'],
    summary: 'Insert a document (200, like every method)',
    args: args({ doc: { type: 'object', required: ['doctype'] } }, ['doc']),
  },
  {
    path: 'frappe.client.insert_many',
    verbs: ['post', 'put'],
    summary:
      'Insert up to 200 documents (each with its doctype) in one transaction, all or nothing; returns the names',
    args: args({ docs: { type: 'array', items: { type: 'object', required: ['doctype'] } } }, ['docs']),
  },
  {
    path: 'frappe.client.bulk_update',
    verbs: ['post', 'put'],
    summary:
      'Save each doc (doctype, docname, fields) in its own transaction; returns {failed_docs: [{doc, exc}]}',
    args: args({ docs: { type: 'array', items: { type: 'object', required: ['doctype', 'docname'] } } }, [
      'docs',
    ]),
  },
  {
    path: 'frappe.client.save',
    verbs: ['post', 'put'],
    summary: 'Save a document (doc with doctype and name)',
    args: args({ doc: { type: 'object', required: ['doctype', 'name'] } }, ['doc']),
  },
  {
    path: 'frappe.client.submit',
    verbs: ['post', 'put'],
    summary: 'Save a document (doc with doctype and name) and submit it',
    args: args({ doc: { type: 'object', required: ['doctype', 'name'] } }, ['doc']),
  },
  {
    path: 'frappe.client.set_value',
    verbs: ['post', 'put'],
    summary: 'Set one field, or several with a fieldname object',
    args: args({ doctype, name: { type: 'string' }, fieldname: { type: ['string', 'object'] }, value: {} }, [
      'doctype',
      'name',
      'fieldname',
    ]),
  },
  {
    path: 'frappe.core.doctype.user.user.generate_keys',
    verbs: ['post'],
    summary: 'Generate API key and secret for a user (System Manager)',
    args: args({ user: { type: 'string' } }, ['user']),
  },
  {
    path: 'login',
    verbs: ['post'],
    summary: 'Log in with usr/pwd; sets the sid cookie',
    args: args({ usr: { type: 'string' }, pwd: { type: 'string' } }, ['usr', 'pwd']),
  },
  { path: 'logout', verbs: ['post'], summary: 'End the current session', args: args({}) },
  { path: 'ping', verbs: ['get', 'post'], summary: 'Liveness check: returns "pong"', args: args({}) },
  {
    path: 'run_doc_method',
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
