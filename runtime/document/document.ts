// The Document base class controllers extend: fields are properties, hooks are methods, save/delete go through the lifecycle.
import type { DocumentSession } from './session';

const sessions = new WeakMap<Document, DocumentSession>();

/** Binds a document to the request it lives in (user, transaction, registry). */
export function attachSession(doc: Document, session: DocumentSession): void {
  sessions.set(doc, session);
}

/** The request a document lives in. */
export function sessionOf(doc: Document): DocumentSession {
  const session = sessions.get(doc);
  if (!session) throw new Error(`${doc.doctype} ${doc.name ?? '(new)'} is not attached to a request`);
  return session;
}

/**
 * A document of some DocType. Controllers extend it:
 * @example
 * export default class Widget extends Document {
 *   async validate() { if (this.qty < 0) throw new ValidationError('Quantity cannot be negative'); }
 * }
 */
export class Document {
  /** Field values, as properties (`this.qty`). */
  [field: string]: any;
  /** The DocType's name. */
  declare doctype: string;
  /** The document's name (primary key). */
  declare name: string;
  declare owner: string;
  declare creation: string;
  declare modified: string;
  declare modified_by: string;
  declare docstatus: 0 | 1 | 2;
  declare idx: number;

  /** True until the document has been inserted. */
  get is_new(): boolean {
    return sessionOf(this).isNew(this);
  }

  /** The session user running this request. */
  get session_user(): string {
    return sessionOf(this).user.name;
  }

  /** Saves the document (insert when new), running every hook inside the request's transaction. */
  async save(): Promise<this> {
    await sessionOf(this).save(this);
    return this;
  }

  /** Inserts a new document. */
  async insert(): Promise<this> {
    await sessionOf(this).save(this);
    return this;
  }

  /** Deletes the document. */
  async delete(): Promise<void> {
    await sessionOf(this).delete(this);
  }

  /** Adds a message shown to the user with the response (`_server_messages` in v1, `messages` in v2). */
  msgprint(message: string): void {
    sessionOf(this).messages.push(message);
  }
}
