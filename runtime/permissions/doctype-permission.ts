// DocType-level permission checks. For now: Administrator and System Manager may do everything, others nothing
// (the foundation's interim rule; role-based DocPerm evaluation replaces this function's body).
import { AuthenticationError, PermissionError } from '../errors/errors';
import type { DocTypeMeta, Right } from '../meta/types';
import { ADMINISTRATOR, type SessionUser } from '../site';

/** True when `user` holds `right` on `meta`. */
export function hasDocTypePermission(user: SessionUser, _meta: DocTypeMeta, _right: Right): boolean {
  return user.name === ADMINISTRATOR || user.roles.has('System Manager');
}

/** Throws 401 for a Guest and 403 for a signed-in user without `right` on `meta`. */
export function assertDocTypePermission(user: SessionUser, meta: DocTypeMeta, right: Right): void {
  if (hasDocTypePermission(user, meta, right)) return;
  if (user.name === 'Guest') throw new AuthenticationError('Login required');
  throw new PermissionError(`No permission to ${right} ${meta.name}`);
}
