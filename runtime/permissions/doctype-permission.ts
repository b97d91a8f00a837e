// DocType-level permission checks: does any of the user's roles grant a right on the DocType at all (on every
// document, or on the user's own documents through an if_owner row)? Decided before any document is looked up.
import { AuthenticationError, PermissionError } from '../errors/errors';
import type { DocTypeMeta, Right } from '../meta/types';
import type { SessionUser } from '../site';
import { rightsFor } from './doctype-rights';

/** True when `user` holds `right` on `meta` for at least some documents (Administrator: always). */
export function hasDocTypePermission(user: SessionUser, meta: DocTypeMeta, right: Right): boolean {
  return rightsFor(user, meta).doc.has(right);
}

/** The error for a refused request: 401 for a Guest (never 403), 403 for a signed-in user. */
export function refusal(user: SessionUser, message: string): AuthenticationError | PermissionError {
  return user.name === 'Guest' ? new AuthenticationError('Login required') : new PermissionError(message);
}

/** Throws 401 for a Guest and 403 for a signed-in user without `right` on `meta`. */
export function assertDocTypePermission(user: SessionUser, meta: DocTypeMeta, right: Right): void {
  if (!hasDocTypePermission(user, meta, right)) throw refusal(user, `No permission to ${right} ${meta.name}`);
}

/**
 * True when `user` may export or import the documents of `meta` as a whole (Frappe's can_export, can_import): a System
 * Manager always, otherwise a role granting `right` on every document (an if_owner row is not enough).
 */
export function holdsBulkRight(user: SessionUser, meta: DocTypeMeta, right: 'export' | 'import'): boolean {
  return user.roles.has('System Manager') || rightsFor(user, meta).doc.get(right) === 'all';
}
