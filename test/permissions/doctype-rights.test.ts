// Table-driven checks of how DocPerm rows become rights: roles, if_owner reach, permlevels, submit rights only on
// submittable DocTypes, Administrator, All and Guest.
import type { DocTypeMeta, PermissionMeta } from '../../runtime/meta/types';
import { hasDocTypePermission } from '../../runtime/permissions/doctype-permission';
import { readsLevel, rightsFor, writesLevel } from '../../runtime/permissions/doctype-rights';
import { GUEST, type SessionUser } from '../../runtime/site';

const meta = (permissions: PermissionMeta[], isSubmittable = false): DocTypeMeta =>
  ({ name: 'Thing', fields: [], permissions, isSubmittable }) as unknown as DocTypeMeta;
const row = (
  role: string,
  rights: PermissionMeta['rights'],
  extra: Partial<PermissionMeta> = {},
): PermissionMeta => ({ role, permlevel: 0, ifOwner: false, rights, ...extra });
const user = (...roles: string[]): SessionUser => ({
  name: 'u@x.test',
  roles: new Set(['All', 'Guest', ...roles]),
});

test('a role gets exactly the rights of its rows; other roles nothing', () => {
  const m = meta([row('Clerk', ['read', 'write'])]);
  expect(hasDocTypePermission(user('Clerk'), m, 'read')).toBe(true);
  expect(hasDocTypePermission(user('Clerk'), m, 'write')).toBe(true);
  expect(hasDocTypePermission(user('Clerk'), m, 'delete')).toBe(false);
  expect(hasDocTypePermission(user('System Manager'), m, 'read')).toBe(false);
});

test('Administrator holds every right and level; All is every signed-in user; a Guest holds only Guest', () => {
  const m = meta([row('All', ['read']), row('Guest', ['select'])]);
  const admin = rightsFor({ name: 'Administrator', roles: new Set(['Administrator']) }, m);
  expect([admin.doc.get('delete'), readsLevel(admin, 7), writesLevel(admin, 7)]).toEqual(['all', true, true]);
  expect(hasDocTypePermission(user(), m, 'read')).toBe(true);
  expect(hasDocTypePermission(GUEST, m, 'read')).toBe(false);
  expect(hasDocTypePermission(GUEST, m, 'select')).toBe(true);
});

test('if_owner rows reach only owned documents unless another row grants the right on all', () => {
  const m = meta([row('Clerk', ['read', 'write'], { ifOwner: true }), row('Viewer', ['read'])]);
  expect(rightsFor(user('Clerk'), m).doc.get('read')).toBe('owner');
  expect(rightsFor(user('Clerk', 'Viewer'), m).doc.get('read')).toBe('all');
  expect(rightsFor(user('Clerk', 'Viewer'), m).doc.get('write')).toBe('owner');
});

test('only permlevel 0 rows grant document rights; higher rows grant field levels', () => {
  const m = meta([
    row('Clerk', ['read']),
    row('Auditor', ['read'], { permlevel: 1 }),
    row('Editor', ['read', 'write'], { permlevel: 2 }),
  ]);
  const auditor = rightsFor(user('Auditor'), m);
  expect(auditor.doc.has('read')).toBe(false);
  expect(readsLevel(auditor, 1)).toBe(true);
  const both = rightsFor(user('Clerk', 'Auditor', 'Editor'), m);
  expect([
    readsLevel(both, 0),
    readsLevel(both, 1),
    readsLevel(both, 2),
    writesLevel(both, 1),
    writesLevel(both, 2),
  ]).toEqual([true, true, true, false, true]);
});

test('submit, cancel and amend count only on submittable DocTypes; import never', () => {
  const rows = [row('Clerk', ['read', 'submit', 'cancel', 'amend', 'import'])];
  for (const right of ['submit', 'cancel', 'amend'] as const) {
    expect(hasDocTypePermission(user('Clerk'), meta(rows), right)).toBe(false);
    expect(hasDocTypePermission(user('Clerk'), meta(rows, true), right)).toBe(true);
  }
  expect(hasDocTypePermission(user('Clerk'), meta(rows, true), 'import')).toBe(false);
});
