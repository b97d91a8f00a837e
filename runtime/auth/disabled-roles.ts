// Disabled roles, as Frappe's Role and User controllers: disabling a Role takes it from everyone who has it (its
// `Has Role` rows are deleted in the same transaction, so no user keeps its rights), the standard roles cannot be
// disabled, and a User saved with a disabled role in `roles` is saved without that row. Enabling the role again gives
// it back to no one.
import type { WritingSave } from '../document/extension-points';
import type { DocData } from '../db/row-store';
import { ValidationError } from '../errors/errors';

/** Frappe's standard roles: they cannot be disabled. */
export const STANDARD_ROLES: ReadonlySet<string> = new Set([
  'Administrator',
  'System Manager',
  'Script Manager',
  'All',
  'Guest',
]);

const HAS_ROLE = 'Has Role';

/** True when the (normalized) Check value is set. */
const isSet = (value: unknown): boolean => Number(value) === 1;

/** checkValues of a Role: 400 when a standard role would be disabled. */
export function refuseDisabledStandardRole(op: WritingSave): void {
  if (isSet(op.data.disabled) && STANDARD_ROLES.has(String(op.data.name)))
    throw new ValidationError('Standard roles cannot be disabled');
}

/** afterWrite of a disabled Role: deletes its `Has Role` rows, whatever their parent (Frappe's Role.remove_roles). */
export async function removeDisabledRole(op: WritingSave): Promise<void> {
  if (!isSet(op.data.disabled)) return;
  const hasRole = op.tx.site.registry.get(HAS_ROLE);
  if (!hasRole) return;
  const removed = Number(await op.trx(hasRole.meta.tableName).where('role', String(op.data.name)).delete());
  if (removed > 0) op.tx.markWritten(HAS_ROLE);
}

/** checkValues of a User: drops the rows of `roles` that name a disabled Role (Frappe's remove_disabled_roles). */
export async function dropDisabledRoles(op: WritingSave): Promise<void> {
  const rows = op.data.roles as DocData[] | undefined;
  if (!Array.isArray(rows) || rows.length === 0) return;
  const role = op.tx.site.registry.get('Role');
  if (!role) return;
  const named = [...new Set(rows.map((row) => String(row.role)))];
  const disabled = new Set(
    (
      (await op.trx(role.meta.tableName).whereIn('name', named).where('disabled', 1).select('name')) as {
        name: string;
      }[]
    ).map((r) => r.name),
  );
  if (disabled.size === 0) return;
  op.data.roles = rows
    .filter((row) => !disabled.has(String(row.role)))
    .map((row, i) => ({ ...row, idx: i + 1 }));
}
