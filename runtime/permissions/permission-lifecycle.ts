// What permissions add to the document lifecycle: the writer's rights on the document (save and delete), the User
// Permissions its Link values must lie in, and the User Permission cache dropped after one is written.
import type { LifecycleExtensions } from '../document/extension-points';
import { assertDeletePermission, assertSavePermission } from './save-permission';
import { forgetUserPermissions, loadUserPermissions } from './user-permissions';

/** Registers the permission checks of every save and delete. */
export function registerPermissions(extensions: LifecycleExtensions): void {
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
  extensions.on('afterTransaction', () => forgetUserPermissions(), 'User Permission');
}
