// Who may receive an event: the read permission of its document, decided when the event is delivered (not only when
// the client subscribed), for the user as of now (a user disabled or stripped of a role since it connected stops
// receiving). One instance serves one batch of events: the document is read once per event and each user decided
// once per event, however many sockets or streams that user holds.
import { loadUser } from '../auth/users';
import type { DocData } from '../db/row-store';
import { hasDocumentPermission } from '../permissions/document-permission';
import { rightsFor } from '../permissions/doctype-rights';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import type { EventRow } from './event-log';

/** The read decisions of one batch of events. */
export class EventReadChecks {
  private readonly docs = new Map<number, Promise<DocData | undefined>>();
  private readonly decisions = new Map<string, Promise<boolean>>();
  private readonly users = new Map<string, Promise<SessionUser | undefined>>();

  constructor(private readonly site: Site) {}

  /** True when the user named `userName` may read the document of `event` now. */
  canRead(userName: string, event: EventRow): Promise<boolean> {
    const key = `${event.id}\u0000${userName}`;
    let decision = this.decisions.get(key);
    if (!decision) this.decisions.set(key, (decision = this.decide(userName, event)));
    return decision;
  }

  /** The user as of now (undefined when disabled or gone); Guest as it is. */
  private user(name: string): Promise<SessionUser | undefined> {
    let user = this.users.get(name);
    if (!user) {
      user =
        name === 'Guest'
          ? Promise.resolve({ name, roles: new Set(['Guest']) })
          : loadUser(this.site.db.knex, name).then((u) => (u && u.enabled ? u : undefined));
      this.users.set(name, user);
    }
    return user;
  }

  private async decide(userName: string, event: EventRow): Promise<boolean> {
    const binding = this.site.registry.get(event.doctype);
    if (!binding) return false;
    const user = await this.user(userName);
    if (!user) return false;
    if (user.name === ADMINISTRATOR) return true;
    if (!rightsFor(user, binding.meta).doc.has('read')) return false;
    const doc = await this.document(event);
    if (!doc) return false;
    return hasDocumentPermission(this.site, user, binding, doc, 'read');
  }

  /**
   * The document as stored now; for a delete (the row is gone) and a Single, its name and owner as the event recorded
   * them. Undefined when a saved document has been deleted since (its delete event follows).
   */
  private document(event: EventRow): Promise<DocData | undefined> {
    let doc = this.docs.get(event.id);
    if (!doc) {
      const binding = this.site.registry.get(event.doctype);
      const recorded: DocData = { name: event.docname, owner: event.owner ?? undefined };
      doc =
        event.action === 'delete' || !binding || binding.meta.issingle
          ? Promise.resolve(recorded)
          : this.site.rows.read(binding, event.docname);
      this.docs.set(event.id, doc);
    }
    return doc;
  }
}
