// The request a document lives in: who acts, in which transaction, and the messages for the response.
import type { Knex } from 'knex';
import type { Site, SessionUser } from '../site';
import type { Document } from './document';

/** What a document needs from its request to save or delete itself. */
export interface DocumentSession {
  site: Site;
  user: SessionUser;
  /** The open transaction's knex (its queries run inside it), when inside one. */
  trx?: Knex;
  /** Messages for the user (`_server_messages` / `messages`). */
  messages: string[];
  isNew(doc: Document): boolean;
  save(doc: Document): Promise<void>;
  delete(doc: Document): Promise<void>;
}
