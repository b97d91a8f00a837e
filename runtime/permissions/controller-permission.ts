// The permission hooks a DocType controller module may export (Frappe's get_permission_query_conditions and
// has_permission): a filter tree that restricts lists, counts and gets, and a per-document refusal. Never SQL text.
import type { DocData } from '../db/row-store';
import type { Right } from '../meta/types';
import type { FilterNode } from '../query/filter-tree';
import type { DocTypeBinding } from '../registry/registry';
import type { SessionUser } from '../site';

/** `export function permissionQuery(user)`: the rows `user` may see, as a filter tree; undefined: no restriction. */
export type PermissionQuery = (user: SessionUser) => FilterNode | undefined;

/** `export function hasPermission(doc, right, user)`: false refuses `right` on the document (it can only deny). */
export type HasPermission = (doc: Readonly<DocData>, right: Right, user: SessionUser) => boolean;

/** The controller's list restriction for `user`, if the controller exports `permissionQuery`. */
export function controllerRestriction(binding: DocTypeBinding, user: SessionUser): FilterNode | undefined {
  const hook = binding.controller?.permissionQuery;
  return typeof hook === 'function' ? (hook as PermissionQuery)(user) : undefined;
}

/** False when the controller exports `hasPermission` and it refuses `right` on `doc` for `user`. */
export function controllerAllows(
  binding: DocTypeBinding,
  doc: Readonly<DocData>,
  right: Right,
  user: SessionUser,
): boolean {
  const hook = binding.controller?.hasPermission;
  return typeof hook === 'function' ? (hook as HasPermission)(doc, right, user) !== false : true;
}
