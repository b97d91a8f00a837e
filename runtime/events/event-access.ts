// Who may receive an event: the read permission of its document, decided when the event is delivered (not only when
// the client subscribed), for the user as of now (a user disabled or stripped of a role since it connected stops
// receiving). One instance serves one batch of events: each user is decided once per event, however many sockets or
// streams that user holds. Most decisions need no document: they are made from the user's DocType rights and User
// Permissions, which are cached and dropped when they change (users: on a User or Has Role write, rightsFor: per
// DocType meta, replaced when its DocPerms change, User Permissions: on a User Permission write), so 1,000 sockets of
// a few users cost a few map lookups per event. Only a read right limited to owners (decided by the event's recorded
// owner), User Permissions that bear on the DocType, or a controller's hasPermission hook need more: the document,
// read once per event in this process (shared by every socket and stream); for a delete, its Deleted Document's copy.
import { loadUser } from '../auth/users';
import type { DocData } from '../db/row-store';
import { latestDeletedCopy } from '../history/history-rows';
import { controllerAllows } from '../permissions/controller-permission';
import { rightsFor } from '../permissions/doctype-rights';
import { loadUserPermissions } from '../permissions/user-permissions';
import type { DocTypeBinding } from '../registry/registry';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import type { EventRow } from './event-log';

/** The document of each event as read at its first decision (the feed hands one row object to every listener). */
const documents = new WeakMap<EventRow, Promise<DocData | undefined>>();

/** The read decisions of one batch of events. */
export class EventReadChecks {
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

  /** The user named `name` as of now (undefined when disabled or gone); Guest as it is. */
  user(name: string): Promise<SessionUser | undefined> {
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
    const reach = rightsFor(user, binding.meta).doc.get('read');
    if (!reach) return false;
    const perms = await loadUserPermissions(this.site, user.name);
    const hook = typeof binding.controller?.hasPermission === 'function';
    if (!hook && !perms.restricts(binding.meta, this.site.registry))
      return reach === 'all' || (event.owner !== null && event.owner === user.name);
    const doc = await this.document(binding, event);
    if (!doc) return false;
    if (reach === 'owner' && doc.owner !== user.name) return false;
    if (!perms.allowsDoc(binding.meta, this.site.registry, doc)) return false;
    return controllerAllows(binding, doc, 'read', user);
  }

  /**
   * The document as stored now; for a delete (the row is gone), the copy its Deleted Document keeps (its Link values
   * decide User Permissions: a user who could not read it gets no delete event either), none when there is no copy;
   * for a Single, its name and owner as the event recorded them. Undefined when a saved document has been deleted
   * since (its delete event follows).
   */
  private document(binding: DocTypeBinding, event: EventRow): Promise<DocData | undefined> {
    let doc = documents.get(event);
    if (!doc) {
      const recorded: DocData = { name: event.docname, owner: event.owner ?? undefined };
      doc =
        event.action === 'delete'
          ? latestDeletedCopy(this.site, binding.meta.name, event.docname)
          : binding.meta.issingle
            ? Promise.resolve(recorded)
            : this.site.rows.read(binding, event.docname);
      documents.set(event, doc);
    }
    return doc;
  }
}
