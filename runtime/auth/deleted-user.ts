// What goes with a deleted User, as Frappe's User.on_trash: the rows about that user alone (its User Permissions, its
// OAuth authorization codes and bearer tokens, its rows in Note Seen By), deleted in the user's delete transaction.
// Their Links to the user do not stop the delete (runtime/back-links); any other document that links to it does.
import type { DeleteOperation } from '../document/extension-points';

/** The Link fields to a User whose rows its delete removes. */
export const USER_OWN_ROWS = [
  { doctype: 'User Permission', fieldname: 'user' },
  { doctype: 'OAuth Authorization Code', fieldname: 'user' },
  { doctype: 'OAuth Bearer Token', fieldname: 'user' },
  { doctype: 'Note Seen By', fieldname: 'user' },
] as const;

/** afterDelete of a User: deletes its own rows of USER_OWN_ROWS (the DocTypes of them the site has). */
export async function deleteUserRows(op: DeleteOperation): Promise<void> {
  const { registry } = op.tx.site;
  const user = String(op.stored.name ?? op.doc.name);
  for (const { doctype, fieldname } of USER_OWN_ROWS) {
    const binding = registry.get(doctype);
    if (!binding) continue;
    if (Number(await op.trx(binding.meta.tableName).where(fieldname, user).delete()) > 0)
      op.tx.markWritten(doctype);
  }
}
