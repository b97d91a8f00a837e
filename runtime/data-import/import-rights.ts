// Who may import into a DocType, as Frappe's can_import: the DocType allows it (`allow_import`), and the user is a
// System Manager or holds the `import` right on every document of it. Each imported document still goes through the
// user's create or write permission.
import { ValidationError } from '../errors/errors';
import type { DocTypeMeta } from '../meta/types';
import { holdsBulkRight, refusal } from '../permissions/doctype-permission';
import type { SessionUser } from '../site';

/** 400 when the DocType does not allow import; 403 (a Guest 401) when `user` may not import it (unless `checkUser` false). */
export function assertCanImport(user: SessionUser, meta: DocTypeMeta, checkUser = true): void {
  if (!meta.allowImport) throw new ValidationError(`Importing ${meta.name} is not allowed`);
  if (!checkUser || holdsBulkRight(user, meta, 'import')) return;
  throw refusal(user, `You are not allowed to import ${meta.name}`);
}
