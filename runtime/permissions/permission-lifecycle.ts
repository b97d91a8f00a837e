// What permissions add to the document lifecycle: the writer's rights on the document (save and delete), the User
// Permissions its Link values must lie in, and the User Permission cache dropped after one is written (in every
// process, with REDIS_URL); and the controllers' `permissionQuery` as a list restriction.
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { controllerRestriction } from './controller-permission';
import { addListRestriction } from './list-restrictions';
import { assertDeletePermission, assertSavePermission } from './save-permission';
import { userPermissionsChanged } from './user-permission-broadcast';
import { loadUserPermissions } from './user-permissions';

/** Registers the permission checks of every save and delete, and the controllers' list restrictions. */
export function registerPermissions(site: Site): void {
  const extensions = lifecycleOf(site);
  extensions.on('authorizeSave', async (op) => {
    const { tx } = op;
    // A copy: the check keeps unwritable child values in place of the given ones (field levels).
    await assertSavePermission(
      op.trx,
      tx.site,
      tx.user,
      op.binding,
      Object.assign({}, op.doc),
      op.stored,
      op.action,
    );
    // The Link values are checked against them with the links (not on cancel, which checks no values).
    if (op.action !== 'cancel') op.linkRestriction = await loadUserPermissions(tx.site, tx.user.name, op.trx);
  });
  extensions.on('authorizeDelete', (op) =>
    assertDeletePermission(op.trx, op.tx.site, op.tx.user, op.binding, op.stored),
  );
  extensions.on('afterTransaction', (tx) => userPermissionsChanged(tx.site), 'User Permission');
  addListRestriction(site, (_site, user, binding) => controllerRestriction(binding, user));
}
