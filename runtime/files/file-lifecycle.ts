// What files add to the document lifecycle: the File document's rules (runtime/files/file-rules.ts), a folder named by
// its path, Attach values that must be readable files, and a deleted document's attachments (and bytes) going with it.
import { tableFields } from '../registry/field-lists';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { lifecycleOf } from '../document/extension-points';
import type { Site } from '../site';
import { afterDelete, checkAttachValues, checkFileDelete, checkFileSave, folderNameOf } from './file-rules';

/** The DocType files are documents of. */
const FILE = 'File';

const isAttach = (fieldtype: string) => fieldtype === 'Attach' || fieldtype === 'Attach Image';

/** True when the DocType or one of its child tables has an Attach or Attach Image field. */
function hasAttachFields(binding: DocTypeBinding, registry: Registry): boolean {
  return (
    binding.meta.fields.some((f) => isAttach(f.fieldtype)) ||
    tableFields(binding.meta, registry).some(({ child }) =>
      child.meta.fields.some((f) => isAttach(f.fieldtype)),
    )
  );
}

/** Registers the files' handlers for the site's DocTypes. */
export function registerFiles(site: Site): void {
  const { registry } = site;
  const extensions = lifecycleOf(site);
  extensions.on('beforeSave', (op) => checkFileSave(op.tx, op.doc, op.stored), FILE);
  // A folder is named by its path (Home/Reports), as in Frappe; the client's name is not used.
  extensions.on(
    'chooseName',
    (op) => {
      const path = folderNameOf(Object.assign({}, op.doc));
      if (path !== undefined) op.name = path;
    },
    FILE,
  );
  for (const binding of registry.all())
    if (hasAttachFields(binding, registry))
      extensions.on(
        'checkValues',
        (op) => checkAttachValues(op.tx, op.binding, op.data, op.stored),
        binding.meta.name,
      );
  extensions.on('beforeDelete', (op) => checkFileDelete(op.tx, op.stored), FILE);
  // Any document takes its attachments along.
  extensions.on('afterDelete', (op) => afterDelete(op.tx, op.binding, op.doc));
}
