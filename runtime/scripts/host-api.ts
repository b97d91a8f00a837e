// The host side of the `frappe` global: each call a script makes re-enters the normal operations layer as the calling
// user (permissions, field levels, user permissions, validation, hooks). Arguments and results are JSON values only.
import type { Caller } from '../document/caller';
import type { SessionUser } from '../site';
import type { DocData } from '../db/row-store';
import { CSRFTokenError, DoesNotExistError, ValidationError } from '../errors/errors';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';
import { publishRealtime, type RealtimeMessage } from '../redis/realtime-channel';

/** The list parameters a script may pass to `frappe.get_list` (Frappe's names; `limit` is `limit_page_length`). */
const LIST_KEYS = [
  'fields',
  'filters',
  'or_filters',
  'order_by',
  'group_by',
  'limit_start',
  'limit_page_length',
];

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 140)
    throw new ValidationError(`${what} must be a non-empty string of at most 140 characters`);
  return value;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError(`${what} must be an object`);
  return value as Record<string, unknown>;
}

/** The list parameters of a `get_list` options object (unknown keys are refused, never passed through). */
function listParams(options: unknown): Record<string, unknown> {
  const given = record(options, 'get_list options');
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    if (key === 'limit') params.limit_page_length = value;
    else if (LIST_KEYS.includes(key)) params[key] = value;
    else throw new ValidationError(`get_list: unknown option ${key.slice(0, 40)}`);
  }
  return params;
}

function pick(doc: DocData, field: unknown): unknown {
  if (typeof field === 'string') return doc[field] ?? null;
  if (Array.isArray(field) && field.every((f) => typeof f === 'string')) {
    const out: Record<string, unknown> = {};
    for (const f of field as string[]) out[f] = doc[f] ?? null;
    return out;
  }
  throw new ValidationError('get_value: the field must be a field name or a list of field names');
}

/** Callers whose scripts may read but not write (see readOnlyCaller), with why: what their first write is told. */
const readOnlyCallers = new WeakMap<Caller, ReadOnlyReason>();

/** Why a caller may not write: a cookie call without its CSRF token, or a run that only ever reads. */
export type ReadOnlyReason = 'csrf' | 'webhook condition';

/**
 * `caller` for a script run that may read but not write: a cookie session's call without its CSRF token (a GET a
 * cross-site page can make the browser send; its first write fails with 400 CSRFTokenError), or a webhook's condition
 * (400 ValidationError). Nothing is written.
 */
export function readOnlyCaller(caller: Caller, reason: ReadOnlyReason = 'csrf'): Caller {
  const copy = { ...caller };
  readOnlyCallers.set(copy, reason);
  return copy;
}

/** `caller` acting as `user` (in its open transaction, if any): a read-only caller stays read-only. */
export function callerAs(caller: Caller, user: SessionUser): Caller {
  const copy: Caller = { ...caller, user, ...(caller.tx ? { tx: caller.tx.actingAs(user) } : {}) };
  const reason = readOnlyCallers.get(caller);
  if (reason) readOnlyCallers.set(copy, reason);
  return copy;
}

function assertMayWrite(caller: Caller, name: string): void {
  const reason = readOnlyCallers.get(caller);
  if (!reason) return;
  const call = `frappe.${name === 'set_value' ? 'db.set_value' : name}`;
  if (reason === 'webhook condition')
    throw new ValidationError(`${call} writes: a webhook's condition may only read`);
  throw new CSRFTokenError(`${call} writes: call this script with the session's CSRF token`);
}

/** The largest payload `frappe.publish_realtime` sends (its JSON text). */
const MAX_REALTIME_BYTES = 64 * 1024;

/**
 * `frappe.publish_realtime(event, message, {doctype, docname, user, room, after_commit})` as Frappe's: the room is
 * `room`, else `user:<user>`, else `doc:<doctype>/<docname>`, else `all` (every signed-in user's sockets).
 */
function realtimeMessage(args: unknown[]): RealtimeMessage {
  const event = text(args[0], 'publish_realtime event');
  const message = args[1] ?? null;
  if (JSON.stringify(message).length > MAX_REALTIME_BYTES)
    throw new ValidationError(`publish_realtime: the message is over ${MAX_REALTIME_BYTES} bytes of JSON`);
  const options = record(args[2], 'publish_realtime options');
  const opt = (key: string) =>
    options[key] === undefined || options[key] === null ? undefined : text(options[key], key);
  const [room, user, doctype, docname] = [opt('room'), opt('user'), opt('doctype'), opt('docname')];
  return {
    event,
    message,
    room: room ?? (user ? `user:${user}` : doctype && docname ? `doc:${doctype}/${docname}` : 'all'),
  };
}

/** Runs one host call of a script for `caller`; `messages` collects what the operations leave for the user. */
export async function callHost(
  caller: Caller,
  messages: string[],
  name: string,
  args: unknown[],
): Promise<unknown> {
  // Documents are handed to scripts in v2's shape (every field, nulls included); list parameters are Frappe's (v1).
  const v2: Caller = { ...caller, version: 2 };
  const v1: Caller = { ...caller, version: 1 };
  switch (name) {
    case 'get_list':
      return (await lists.listDocuments(v1, text(args[0], 'doctype'), listParams(args[1]))).data;
    case 'get_doc':
      return documents.getDocument(v2, text(args[0], 'doctype'), text(args[1], 'name'));
    case 'new_doc': {
      assertMayWrite(caller, name);
      const result = await documents.createDocument(
        v2,
        text(args[0], 'doctype'),
        record(args[1], 'new_doc fields'),
      );
      messages.push(...result.messages);
      return result.doc;
    }
    case 'get_value': {
      const doctype = text(args[0], 'doctype');
      if (typeof args[1] === 'object' && args[1] !== null) {
        const fields = typeof args[2] === 'string' ? [args[2]] : args[2];
        const rows = (
          await lists.listDocuments(v1, doctype, { filters: args[1], fields, limit_page_length: 1 })
        ).data as DocData[];
        return rows[0] ? pick(rows[0], args[2]) : null;
      }
      try {
        return pick(await documents.getDocument(v2, doctype, text(args[1], 'name')), args[2]);
      } catch (err) {
        if (err instanceof DoesNotExistError) return null;
        throw err;
      }
    }
    case 'set_value': {
      assertMayWrite(caller, name);
      const changes =
        typeof args[2] === 'string' ? { [args[2]]: args[3] } : record(args[2], 'set_value field');
      const result = await documents.updateDocument(
        v2,
        text(args[0], 'doctype'),
        text(args[1], 'name'),
        changes,
      );
      messages.push(...result.messages);
      return result.doc;
    }
    case 'count':
      return lists.countDocuments(v1, text(args[0], 'doctype'), { filters: args[1] ?? {} });
    case 'publish_realtime': {
      assertMayWrite(caller, name);
      const message = realtimeMessage(args);
      // after_commit inside a document event: sent once its write commits, never when it rolls back (Frappe's).
      if (caller.tx && record(args[2], 'publish_realtime options').after_commit)
        caller.tx.afterCommit(() => publishRealtime(caller.site, message));
      else await publishRealtime(caller.site, message);
      return null;
    }
    default:
      throw new ValidationError(`frappe has no function ${name.slice(0, 40)}`);
  }
}
