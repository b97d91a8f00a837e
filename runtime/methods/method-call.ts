// MethodCall: the second argument of every whitelisted function — who is calling, and document operations that run as them.
import type { Knex } from 'knex';
import type { Caller } from '../document/caller';
import type { DocData } from '../db/row-store';
import * as documents from '../operations/document-operations';
import * as lists from '../operations/list-operations';
import type { SessionUser } from '../site';

/** What a whitelisted function may use besides its arguments. Every operation is permission-checked as the caller. */
export interface MethodCall {
  /** The authenticated user (Guest for guests); arguments can never change it. */
  readonly user: SessionUser;
  /** The API version of the request. */
  readonly version: 1 | 2;
  /**
   * The site's database (SQLite or MariaDB) for custom read queries, e.g. through a generated objection model:
   * `NoteModel.query(call.knex).withGraphFetched('seen_by')`. Outside the document lifecycle: it checks no
   * permission and runs no hook or validation, and it is not the transaction of a document being saved.
   */
  readonly knex: Knex;
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

/** The MethodCall of one request: a small object per call, its operations on the prototype. */
class RequestMethodCall implements MethodCall {
  constructor(
    private readonly caller: Caller,
    private readonly messages: string[],
  ) {}

  get user(): SessionUser {
    return this.caller.user;
  }

  get version(): 1 | 2 {
    return this.caller.version;
  }

  get knex(): Knex {
    return this.caller.site.db.knex;
  }

  msgprint(message: string): void {
    this.messages.push(String(message));
  }

  getDoc(doctype: string, name: string): Promise<DocData> {
    return documents.getDocument(this.caller, doctype, name);
  }

  async getList(doctype: string, params: Record<string, unknown> = {}): Promise<DocData[]> {
    // Frappe's list parameters are v1's (limit_page_length, list or dict filters), whatever the request's version.
    return (await lists.listDocuments({ ...this.caller, version: 1 }, doctype, params)).data as DocData[];
  }

  async insert({ doctype, ...fields }: { doctype: string } & Record<string, unknown>): Promise<DocData> {
    const result = await documents.createDocument(this.caller, doctype, fields);
    this.messages.push(...result.messages);
    return result.doc;
  }

  async setValue(doctype: string, name: string, values: Record<string, unknown>): Promise<DocData> {
    const result = await documents.updateDocument(this.caller, doctype, name, values);
    this.messages.push(...result.messages);
    return result.doc;
  }

  async deleteDoc(doctype: string, name: string): Promise<void> {
    this.messages.push(...(await documents.deleteDocument(this.caller, doctype, name)));
  }
}

/** A MethodCall for `caller`; the messages it collects are returned with the response. */
export function createMethodCall(caller: Caller, messages: string[]): MethodCall {
  return new RequestMethodCall(caller, messages);
}
