// The rights a write through the document lifecycle needs: create (and amend, submit) for a new document; write,
// submit or cancel on the stored one by the docstatus transition; delete; and the field levels of the changed values.
import type { SaveAction } from '../document/hooks';
import type { DocData, Queryable } from '../db/row-store';
import type { Right } from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import { controllerAllows } from './controller-permission';
import { hasDocumentPermission } from './document-permission';
import { refusal } from './doctype-permission';
import { rightsFor } from './doctype-rights';
import { PermissionError } from '../errors/errors';
import { checkWriteLevels, keepUnwritableRowValues } from './field-levels';

/** The right each save action needs on the stored document (a new document needs `create`). */
/** The role Frappe reserves to the Administrator user. */
const ADMINISTRATOR_ROLE = 'Administrator';

const ACTION_RIGHT: Readonly<Record<SaveAction, Right>> = {
  insert: 'create',
  save: 'write',
  submit: 'submit',
  cancel: 'cancel',
  update_after_submit: 'write',
};

/**
 * Throws 401/403 unless `user` may perform `action` with `data` (`stored`: the document as stored, undefined when
 * new); `q` is the write's transaction.
 */
export async function assertSavePermission(
  q: Queryable,
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
  data: DocData,
  stored: DocData | undefined,
  action: SaveAction,
): Promise<void> {
  if (user.name === ADMINISTRATOR) return;
  refuseAdministratorRecord(binding, stored);
  refuseAdministratorRoleChange(binding, data, stored);
  const { meta } = binding;
  if (!stored) {
    // A new document: the user will own it, so an if_owner create row is enough; its Link values are checked with the links.
    const rights = rightsFor(user, meta).doc;
    const needed: Right[] = [
      'create',
      ...(action === 'submit' ? (['submit'] as const) : []),
      ...(data.amended_from ? (['amend'] as const) : []),
    ];
    for (const right of needed) {
      // Object.assign, not a spread with an added key: V8 makes that copy cost microseconds.
      if (
        !rights.has(right) ||
        !controllerAllows(binding, Object.assign({}, data, { owner: user.name }), right, user)
      ) {
        throw refusal(user, `No permission to ${right} ${meta.name}`);
      }
    }
  } else {
    const right = ACTION_RIGHT[action];
    if (!(await hasDocumentPermission(site, user, binding, stored, right, q))) {
      throw refusal(user, `No permission to ${right} ${meta.name} ${String(stored.name)}`);
    }
  }
  if (stored) keepUnwritableRowValues(user, binding, site.registry, data, stored);
  checkWriteLevels(user, binding, site.registry, data, stored);
}

/**
 * Only Administrator changes or deletes the Administrator User record: its password and API key are the keys to
 * everything, so a System Manager who could set them (or its api_secret) would act as Administrator.
 */
function refuseAdministratorRecord(binding: DocTypeBinding, stored: DocData | undefined): void {
  if (binding.meta.name === 'User' && stored?.name === ADMINISTRATOR)
    throw new PermissionError('Only Administrator may change the Administrator user');
}

/** The number of `Administrator` rows in a User's `roles` table (0 when the table is absent). */
function administratorRoles(doc: DocData | undefined): number {
  const rows = doc?.roles;
  return Array.isArray(rows)
    ? rows.filter((row) => (row as DocData | null)?.role === ADMINISTRATOR_ROLE).length
    : 0;
}

/**
 * Only Administrator gives or takes the Administrator role (Frappe keeps it to Administrator): a System Manager who
 * could grant it would hold every permission row written for it, on the core DocTypes and any app's.
 */
function refuseAdministratorRoleChange(
  binding: DocTypeBinding,
  data: DocData,
  stored: DocData | undefined,
): void {
  if (binding.meta.name !== 'User') return;
  if (administratorRoles(data) !== administratorRoles(stored))
    throw new PermissionError('Only Administrator may grant or remove the Administrator role');
}

/** Throws 401/403 unless `user` may delete the stored document (`q`: the delete's transaction). */
export async function assertDeletePermission(
  q: Queryable,
  site: Site,
  user: SessionUser,
  binding: DocTypeBinding,
  stored: DocData,
): Promise<void> {
  if (user.name !== ADMINISTRATOR) refuseAdministratorRecord(binding, stored);
  if (await hasDocumentPermission(site, user, binding, stored, 'delete', q)) return;
  throw refusal(user, `No permission to delete ${binding.meta.name} ${String(stored.name)}`);
}
