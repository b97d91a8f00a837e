// Controller of Note: a Note that is not public is visible only to its owner (and Administrator), in lists, counts and gets.
import { cond, or, type HasPermission, type PermissionQuery } from 'doctype-service';

/** Lists and counts: the user's own Notes and the public ones (Frappe's get_permission_query_conditions for Note). */
export const permissionQuery: PermissionQuery = (user) =>
  or(cond('owner', '=', user.name), cond('public', '=', 1));

/** One Note: public, or owned by the user (Frappe's has_permission for Note). */
export const hasPermission: HasPermission = (doc, _right, user) =>
  Number(doc.public) === 1 || doc.owner === user.name;
