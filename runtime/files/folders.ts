// Frappe's folder method: frappe.core.api.file.create_new_folder(file_name, folder) makes a folder (a File with
// is_folder) under an existing one; a folder that already exists is answered as it is (Frappe's ignore_if_duplicate).
import { DuplicateEntryError, ValidationError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import * as documents from '../operations/document-operations';
import { sanitiseFileName } from './file-names';

/** create_new_folder: the folder document (new, or the one of that path that exists). */
export async function createNewFolder(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const fileName = typeof params.file_name === 'string' ? params.file_name.trim() : '';
  const folder = typeof params.folder === 'string' ? params.folder.trim() : '';
  if (!fileName || !folder) throw new ValidationError('file_name and folder are required');
  const caller = callerOf(ctx);
  try {
    const result = await documents.createDocument(caller, 'File', {
      is_folder: 1,
      file_name: fileName,
      folder,
    });
    ctx.state.messages.push(...result.messages);
    return result.doc;
  } catch (err) {
    if (!(err instanceof DuplicateEntryError)) throw err;
    return documents.getDocument(caller, 'File', `${folder}/${sanitiseFileName(fileName)}`);
  }
}
