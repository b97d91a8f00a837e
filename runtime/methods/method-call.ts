// MethodCall: the second argument of every whitelisted function — who is calling, and document operations that run as them.
import type { DocData } from '../document/store';
import type { Caller } from '../operations/caller';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';
import type { SessionUser } from '../site';

/** What a whitelisted function may use besides its arguments. Every operation is permission-checked as the caller. */
export interface MethodCall {
  /** The authenticated user (Guest for guests); arguments can never change it. */
  readonly user: SessionUser;
  /** The API version of the request. */
  readonly version: 1 | 2;
  /** Adds a message for the user, sent as `_server_messages` (v1) or `messages` (v2). */
  msgprint(message: string): void;
  /** Reads one document. */
  getDoc(doctype: string, name: string): Promise<DocData>;
  /** Lists documents with Frappe's list parameters (`fields`, `filters`, `order_by`, `limit_page_length`, ...). */
  getList(doctype: string, params?: Record<string, unknown>): Promise<DocData[]>;
  /** Inserts a document (`doctype` names its DocType). */
  insert(doc: { doctype: string } & Record<string, unknown>): Promise<DocData>;
  /** Changes fields of a stored document. */
  setValue(doctype: string, name: string, values: Record<string, unknown>): Promise<DocData>;
  /** Deletes a document. */
  deleteDoc(doctype: string, name: string): Promise<void>;
}

/** A MethodCall for `caller`; the messages it collects are returned with the response. */
export function createMethodCall(caller: Caller, messages: string[]): MethodCall {
  return {
    user: caller.user,
    version: caller.version,
    msgprint: (message) => void messages.push(String(message)),
    getDoc: (doctype, name) => documents.getDocument(caller, doctype, name),
    getList: async (doctype, params = {}) => (await lists.listDocuments({ ...caller, version: 1 }, doctype, params)).data as DocData[],
    insert: async ({ doctype, ...fields }) => {
      const result = await documents.createDocument(caller, doctype, fields);
      messages.push(...result.messages);
      return result.doc;
    },
    setValue: async (doctype, name, values) => {
      const result = await documents.updateDocument(caller, doctype, name, values);
      messages.push(...result.messages);
      return result.doc;
    },
    deleteDoc: async (doctype, name) => void messages.push(...(await documents.deleteDocument(caller, doctype, name))),
  };
}
