// Who may import into a DocType, as Frappe's can_import: the DocType allows it (`allow_import`), and the user is a
// System Manager or holds the `import` right on every document of it. Each imported document still goes through the
// user's create or write permission.
import { PermissionError, ValidationError } from '../errors/errors';
import type { DocTypeMeta } from '../meta/types';
import { holdsBulkRight } from '../permissions/doctype-permission';
import type { SessionUser } from '../site';

/** 400 when the DocType does not allow import; 403 when `user` may not import it (skipped with `checkUser` false). */
export function assertCanImport(user: SessionUser, meta: DocTypeMeta, checkUser = true): void {
  if (!meta.allowImport) throw new ValidationError(`Importing ${meta.name} is not allowed`);
  if (!checkUser || holdsBulkRight(user, meta, 'import')) return;
  throw new PermissionError(`You are not allowed to import ${meta.name}`);
}
