// The File document's rules, run by the document lifecycle: sanitised names, file URLs only of this site's readable
// files, attaching needs write on the target, stored facts never change; deleting a File (or the document it is
// attached to) removes its bytes after the commit when no other File shares them; Attach fields take only readable files.
import type { Knex } from 'knex';
import type { Document } from '../document/document';
import { tableFields } from '../registry/field-lists';
import type { DocData } from '../db/row-store';
import {
  DoesNotExistError,
  FolderNotEmpty,
  LinkValidationError,
  MandatoryError,
  ValidationError,
} from '../errors/errors';
import { now } from '../db/stored-values';
import type { FieldMeta } from '../meta/types';
import { assertDocTypePermission, refusal } from '../permissions/doctype-permission';
import { hasDocumentPermission } from '../permissions/document-permission';
import type { DocTypeBinding } from '../registry/registry';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import { readableFileWithUrl } from './file-access';
import { keyOfUrl, sanitiseFileName } from './file-names';
import { siteStorage, withLock } from './site-files';

/** What the rules need of the document transaction. */
export interface FileRuleContext {
  site: Site;
  user: SessionUser;
  ignorePermissions: boolean;
  trx?: Knex;
  afterCommit(task: () => Promise<void>): void;
}

/** File documents the upload flow made: their URL names bytes the flow stored (or shared) itself. */
const uploaded = new WeakSet<object>();

/** Marks a new File document as made by upload_file (its file_url and content facts are the server's own). */
export function markUploaded(doc: object): void {
  uploaded.add(doc);
}

/** Fields whose stored value never changes once the File exists. */
const FIXED = ['file_url', 'is_private', 'content_hash', 'file_size'] as const;
/** Fields that say what a File is (a file, a folder, one of the site's two folders): fixed at insert. */
const KIND = ['is_folder', 'is_home_folder', 'is_attachments_folder'] as const;

/** The folder every site has, holding everything else; and the one attachments go to when no folder is given. */
export const HOME_FOLDER = 'Home';
export const ATTACHMENTS_FOLDER = 'Home/Attachments';
/** Longest folder path (a folder's name is its path, as in Frappe). */
const MAX_FOLDER_PATH = 140;

const flag = (value: unknown) => Number(value ?? 0) === 1;

/** The name a new folder gets: its parent folder's name, `/` and its own name (Frappe's autoname of a folder). */
export function folderNameOf(doc: DocData): string | undefined {
  if (!flag(doc.is_folder)) return undefined;
  return typeof doc.folder === 'string' && doc.folder ? `${doc.folder}/${String(doc.file_name)}` : undefined;
}

/** Throws unless `folder` names an existing folder (400: a missing one is a Link to nowhere, a file is no folder). */
async function assertFolder(ctx: FileRuleContext, folder: unknown): Promise<void> {
  if (typeof folder !== 'string' || !folder) throw new ValidationError('folder must be the name of a folder');
  const row = (await (ctx.trx ?? ctx.site.db.knex)('tabFile').where('name', folder).first('is_folder')) as
    { is_folder: unknown } | undefined;
  if (!row) throw new LinkValidationError(`Could not find Folder: ${folder.slice(0, 140)}`);
  if (!flag(row.is_folder)) throw new ValidationError(`${folder.slice(0, 140)} is not a folder`);
}

/** Makes the Home and Home/Attachments folders a site needs (once; safe when several processes start at once). */
export async function ensureFileFolders(site: Site): Promise<void> {
  if (!site.registry.get('File')) return;
  const stamp = now();
  const base = {
    owner: ADMINISTRATOR,
    modified_by: ADMINISTRATOR,
    creation: stamp,
    modified: stamp,
    docstatus: 0,
    idx: 0,
    is_folder: 1,
    is_private: 0,
    is_home_folder: 0,
    is_attachments_folder: 0,
    file_size: 0,
  };
  await site.db
    .knex('tabFile')
    .insert([
      { ...base, name: HOME_FOLDER, file_name: 'Home', folder: null, is_home_folder: 1 },
      {
        ...base,
        name: ATTACHMENTS_FOLDER,
        file_name: 'Attachments',
        folder: HOME_FOLDER,
        is_attachments_folder: 1,
      },
    ])
    .onConflict('name')
    .ignore();
}

/** Before a folder is written: no bytes, no attachment, a name, a parent folder; never renamed or moved later. */
function checkFolder(doc: Document, stored: DocData | undefined): void {
  if (stored) {
    if (
      String(doc.file_name ?? '') !== String(stored.file_name ?? '') ||
      (doc.folder ?? null) !== (stored.folder ?? null)
    )
      throw new ValidationError('A folder cannot be renamed or moved');
    return;
  }
  if (doc.file_url) throw new ValidationError('A folder has no file_url');
  if (doc.attached_to_doctype || doc.attached_to_name)
    throw new ValidationError('A folder cannot be attached to a document');
  if (typeof doc.file_name !== 'string' || !doc.file_name.trim())
    throw new MandatoryError('file_name is required: the name of the folder');
  doc.is_folder = 1;
  doc.is_private = 0;
  doc.file_size = 0;
  doc.content_hash = null;
  doc.file_type = null;
  doc.folder = doc.folder || HOME_FOLDER;
}

/** Before a File is deleted: the site's two folders stay, and a folder goes only when empty (Frappe's FolderNotEmpty). */
export async function checkFileDelete(ctx: FileRuleContext, doc: DocData): Promise<void> {
  if (flag(doc.is_home_folder) || flag(doc.is_attachments_folder))
    throw new ValidationError('Cannot delete Home and Attachments folders');
  if (
    flag(doc.is_folder) &&
    (await (ctx.trx ?? ctx.site.db.knex)('tabFile').where('folder', String(doc.name)).first('name'))
  )
    throw new FolderNotEmpty(`Folder ${String(doc.name).slice(0, 140)} is not empty`);
}

/** Throws unless `user` may write the document `doctype`/`name` (Frappe's rule for attaching a file to it). */
export async function assertMayAttach(
  site: Site,
  user: SessionUser,
  doctype: string,
  name: string,
  q?: Knex,
): Promise<void> {
  const binding = site.registry.get(doctype);
  if (!binding || binding.meta.istable || binding.meta.isVirtual)
    throw new DoesNotExistError(`DocType ${doctype.slice(0, 140)} not found`);
  if (user.name === ADMINISTRATOR) {
    if (!(await (q ? site.rows.load(q, binding, name) : site.rows.read(binding, name))))
      throw new DoesNotExistError(`${doctype} ${name.slice(0, 140)} not found`);
    return;
  }
  assertDocTypePermission(user, binding.meta, 'write');
  const docName = binding.meta.issingle ? doctype : name;
  const doc = await (q ? site.rows.load(q, binding, docName) : site.rows.read(binding, docName));
  if (!doc) throw new DoesNotExistError(`${doctype} ${name.slice(0, 140)} not found`);
  if (!(await hasDocumentPermission(site, user, binding, doc, 'write', q)))
    throw refusal(user, `No permission to attach files to ${doctype} ${name.slice(0, 140)}`);
}

/** Before a File is written: names sanitised, URL checked (new rows) or unchanged (stored rows), attach right checked. */
export async function checkFileSave(
  ctx: FileRuleContext,
  doc: Document,
  stored: DocData | undefined,
): Promise<void> {
  if (stored) {
    for (const field of [...FIXED, ...KIND])
      if (String(doc[field] ?? '') !== String(stored[field] ?? ''))
        throw new ValidationError(`${field} of a File cannot be changed`);
  } else if (flag(doc.is_home_folder) || flag(doc.is_attachments_folder))
    throw new ValidationError('Only the site makes the Home and Attachments folders');
  if (flag(doc.is_folder) || flag(stored?.is_folder)) checkFolder(doc, stored);
  else if (!stored && !uploaded.has(doc)) {
    const url = typeof doc.file_url === 'string' ? doc.file_url : '';
    if (!url) throw new ValidationError('file_url is required: upload files with upload_file');
    if (!keyOfUrl(url))
      throw new ValidationError('file_url must name a file of this site (/files/… or /private/files/…)');
    const source = await readableFileWithUrl(ctx.site, ctx.user, url, ctx.trx);
    if (!source) throw refusal(ctx.user, 'No permission to read this file');
    for (const field of [...FIXED, 'file_type'] as const) doc[field] = source[field] ?? null;
  }
  const name =
    typeof doc.file_name === 'string' && doc.file_name ? doc.file_name : keyOfUrl(String(doc.file_url))?.name;
  doc.file_name = sanitiseFileName(name ?? 'file');
  const doctype = typeof doc.attached_to_doctype === 'string' ? doc.attached_to_doctype : '';
  const target = typeof doc.attached_to_name === 'string' ? doc.attached_to_name : '';
  if (Boolean(doctype) !== Boolean(target))
    throw new ValidationError('attached_to_doctype and attached_to_name go together');
  const moved =
    !stored || doctype !== (stored.attached_to_doctype ?? '') || target !== (stored.attached_to_name ?? '');
  if (doctype && moved && !ctx.ignorePermissions)
    await assertMayAttach(ctx.site, ctx.user, doctype, target, ctx.trx);
  // Every File but the Home folder lives in a folder: as Frappe, Home/Attachments for an attachment, else Home.
  if (!flag(doc.is_home_folder)) {
    if (!doc.folder) doc.folder = doctype ? ATTACHMENTS_FOLDER : HOME_FOLDER;
    if (!stored || doc.folder !== stored.folder) await assertFolder(ctx, doc.folder);
  }
  const path = stored ? undefined : folderNameOf(doc);
  if (path !== undefined && path.length > MAX_FOLDER_PATH)
    throw new ValidationError(`A folder path is at most ${MAX_FOLDER_PATH} characters`);
}

/** After the commit: removes the bytes of `file` unless another File still names them. */
function releaseBytes(ctx: FileRuleContext, file: DocData): void {
  const url = String(file.file_url ?? '');
  const key = keyOfUrl(url);
  if (!key) return;
  const { site } = ctx;
  const inUse = async () => Boolean(await site.db.knex('tabFile').where('file_url', url).first('name'));
  const contentHash = typeof file.content_hash === 'string' ? file.content_hash : undefined;
  ctx.afterCommit(() =>
    withLock(String(file.content_hash || url), async () => {
      if (!(await inUse())) await siteStorage(site).delete(key, { contentHash, inUse });
    }),
  );
}

/** After a document's row is deleted: a File releases its bytes; any other document takes its attachments along. */
export async function afterDelete(
  ctx: FileRuleContext,
  binding: DocTypeBinding,
  doc: Document,
): Promise<void> {
  const trx = ctx.trx;
  if (!trx || !ctx.site.registry.get('File')) return;
  if (binding.meta.name === 'File') return releaseBytes(ctx, doc);
  const attached = (await trx('tabFile')
    .where({ attached_to_doctype: binding.meta.name, attached_to_name: doc.name })
    .select('name', 'file_url', 'content_hash')) as DocData[];
  if (!attached.length) return;
  await trx('tabFile')
    .whereIn(
      'name',
      attached.map((f) => f.name as string),
    )
    .delete();
  for (const file of attached) releaseBytes(ctx, file);
}

const attachFieldsCache = new WeakMap<DocTypeBinding, readonly FieldMeta[]>();

/** The Attach and Attach Image fields of a DocType. */
function attachFields(binding: DocTypeBinding): readonly FieldMeta[] {
  let found = attachFieldsCache.get(binding);
  if (!found) {
    found = binding.meta.fields.filter((f) => f.fieldtype === 'Attach' || f.fieldtype === 'Attach Image');
    attachFieldsCache.set(binding, found);
  }
  return found;
}

/** Throws unless every changed Attach/Attach Image value of `data` (a document or a child row) is a readable file URL. */
async function checkAttachRow(
  ctx: FileRuleContext,
  fields: readonly FieldMeta[],
  data: DocData,
  stored: DocData | undefined,
  where: string,
): Promise<void> {
  for (const field of fields) {
    const value = data[field.fieldname];
    if (value === null || value === undefined || value === '') continue;
    if (stored && stored[field.fieldname] === value) continue;
    const label = `${field.label || field.fieldname}${where}`;
    const url = typeof value === 'string' ? value : '';
    if (!keyOfUrl(url)) throw new ValidationError(`${label} must be the URL of a file uploaded to this site`);
    if (ctx.ignorePermissions) continue;
    if (!(await readableFileWithUrl(ctx.site, ctx.user, url, ctx.trx)))
      throw refusal(ctx.user, `No permission to read the file in ${label}`);
  }
}

/**
 * An Attach/Attach Image value that changed, in the document or in a row of its child tables, must be the URL of a
 * File of this site the writer may read. A child row is compared with the stored row of the same name.
 */
export async function checkAttachValues(
  ctx: FileRuleContext,
  binding: DocTypeBinding,
  data: DocData,
  stored: DocData | undefined,
): Promise<void> {
  await checkAttachRow(ctx, attachFields(binding), data, stored, '');
  for (const { field, child } of tableFields(binding.meta, ctx.site.registry)) {
    const fields = attachFields(child);
    const rows = data[field.fieldname];
    if (!fields.length || !Array.isArray(rows)) continue;
    const before = new Map(
      ((stored?.[field.fieldname] as DocData[] | undefined) ?? []).map((r) => [String(r.name), r]),
    );
    for (const [i, row] of (rows as DocData[]).entries())
      await checkAttachRow(
        ctx,
        fields,
        row,
        before.get(String(row.name)),
        ` in row ${i + 1} of ${field.label || field.fieldname}`,
      );
  }
}
