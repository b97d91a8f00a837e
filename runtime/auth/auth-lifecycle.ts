// What authentication adds to the document lifecycle: Password fields stored in `__Auth` (and deleted with their
// document, so a user made again under a deleted one's name, or restored, gets none of its secrets back), the sessions
// of a user whose password changed ended after the commit, disabled roles taken from users, credential caches dropped
// after writes, and other processes told.
import type { SaveOperation } from '../document/extension-points';
import { fieldLists } from '../registry/field-lists';
import type { DocumentTransaction } from '../document/lifecycle';
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { authChanged } from './auth-broadcast';
import { forgetAuthCaches } from './auth-caches';
import { deleteUserRows } from './deleted-user';
import { dropDisabledRoles, refuseDisabledStandardRole, removeDisabledRole } from './disabled-roles';
import { isKeySource } from './key-sources';
import {
  deleteChildAuth,
  isNewSecret,
  secretTables,
  storeChildPasswordFields,
  storePasswordFields,
} from './password-fields';
import { deleteAuth } from './passwords';
import { endUserSessions } from './sessions';

/** DocTypes whose writes change what authentication reads (every process is told after the transaction). */
const AUTH_DOCTYPES = ['User', 'Has Role', 'OAuth Bearer Token'];

/** Saves of a User that set a new password: its sessions end after the commit. */
const passwordChanged = new WeakSet<SaveOperation>();

/** True when this save of a User sets a new password (known from beforeWrite on). */
export function setsNewPassword(op: SaveOperation): boolean {
  return passwordChanged.has(op);
}

/** Tells every process that users or tokens changed (one notice per transaction, whichever of them it wrote). */
function broadcast(tx: DocumentTransaction): Promise<void> {
  return authChanged(tx.site);
}

/** Registers authentication's handlers for the site's DocTypes. */
export function registerAuth(site: Site): void {
  const { registry } = site;
  const extensions = lifecycleOf(site);
  // Before the Password fields are moved out (new_password is emptied there).
  extensions.on(
    'beforeWrite',
    (op) => {
      if (!op.isNew && isNewSecret(op.data.new_password)) passwordChanged.add(op);
    },
    'User',
  );
  for (const binding of registry.all())
    if (fieldLists(binding.meta).passwords.length) {
      extensions.on(
        'beforeWrite',
        (op) => storePasswordFields(op.trx, op.binding, op.data),
        binding.meta.name,
      );
      extensions.on(
        'afterDelete',
        (op) => deleteAuth(op.trx, op.binding.meta.name, String(op.stored.name)),
        binding.meta.name,
      );
    }
  // A child row's Password fields likewise, through its parent's save and delete.
  for (const binding of registry.all()) {
    const tables = secretTables(binding, registry);
    if (!tables.length) continue;
    extensions.on(
      'beforeWrite',
      (op) => storeChildPasswordFields(op.trx, tables, op.data, op.stored),
      binding.meta.name,
    );
    extensions.on('afterDelete', (op) => deleteChildAuth(op.trx, tables, op.stored), binding.meta.name);
  }
  // A disabled role is taken from everyone (not a standard one), and no user is saved with it (Frappe's Role and User).
  extensions.on('checkValues', refuseDisabledStandardRole, 'Role');
  extensions.on('afterWrite', removeDisabledRole, 'Role');
  extensions.on('checkValues', dropDisabledRoles, 'User');
  // A new user is named by its email trimmed and in lower case (Frappe's User.autoname), so no two users differ only
  // in case where names compare case-sensitively (SQLite, PostgreSQL).
  extensions.on(
    'chooseName',
    (op) => {
      const email = op.doc.email;
      if (typeof email !== 'string' || email.trim() === '') return;
      op.doc.email = email.trim().toLowerCase();
      op.name = op.doc.email as string;
    },
    'User',
  );
  // A user's full name is its first and last names (Frappe's User.set_full_name), whatever the client sent.
  extensions.on(
    'validateSave',
    (op) => {
      op.data.full_name = [op.data.first_name, op.data.last_name]
        .filter((part) => typeof part === 'string' && part !== '')
        .join(' ');
    },
    'User',
  );
  // A deleted user's own rows go with it (Frappe's User.on_trash).
  extensions.on('afterDelete', deleteUserRows, 'User');
  // A new password ends every session of its user (a stolen session dies with the old password).
  extensions.on(
    'afterCommit',
    (op) =>
      op.kind === 'save' && passwordChanged.has(op)
        ? endUserSessions(op.tx.site, String(op.data.name))
        : undefined,
    'User',
  );
  // Any DocType may serve as a custom API key source: its cache goes with every write, and again at the end.
  extensions.on('afterWrite', (op) => forgetAuthCaches(op.binding.meta.name));
  extensions.on('afterDelete', (op) => forgetAuthCaches(op.binding.meta.name));
  extensions.on('afterTransaction', (_tx, written) => {
    for (const doctype of written) forgetAuthCaches(doctype);
  });
  for (const doctype of AUTH_DOCTYPES) extensions.on('afterTransaction', broadcast, doctype);
  // A custom key source's rows are API keys too: a regenerated or disabled key reaches every process at once.
  for (const binding of registry.all())
    if (isKeySource(binding)) extensions.on('afterTransaction', broadcast, binding.meta.name);
}
