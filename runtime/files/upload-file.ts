// upload_file (/api/method/upload_file, /api/v2/method/upload_file): a multipart `file` streamed to a temporary file,
// stored under the File's own name (its bytes once per content, SHA-256), recorded as a File document; or `file_url`
// of a File of this site to attach again.
import { rm } from 'node:fs/promises';
import { loadSettings } from '../auth/settings';
import { DocumentTransaction } from '../document/lifecycle';
import { serializeDoc } from '../document/serialize';
import type { DocData } from '../db/row-store';
import { AuthenticationError, ValidationError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { assertCsrfToken } from '../auth/csrf-token';
import { callerOf } from '../http/caller-of';
import { readableDoc } from '../permissions/field-levels';
import { assertMayAttach, markUploaded } from './file-rules';
import { collisionName, extensionOf, fileUrlOf, sanitiseFileName } from './file-names';
import { readUploadForm, type UploadedPart } from './multipart';
import { siteStorage, withLock } from './site-files';
import type { StorageKey } from './storage';

/** Room for the text parts and multipart framing on top of max_file_size (the body parser's 413 before any read). */
export const UPLOAD_FORM_ROOM = 1024 * 1024;

/** The form fields upload_file takes (as Frappe), all optional. */
const TEXT_FIELDS = [
  'doctype',
  'docname',
  'fieldname',
  'is_private',
  'file_name',
  'folder',
  'file_url',
  'optimize',
];

/** Frappe's truthy form values. */
function truthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}

/** The request's fields and file: multipart streamed; a JSON or urlencoded body (file_url only) as parsed. */
async function readForm(ctx: AppContext): Promise<{ fields: Record<string, string>; file?: UploadedPart }> {
  if (ctx.request.type === 'multipart/form-data') {
    const conf = ctx.state.site.config.site;
    return readUploadForm(ctx, {
      tempDir: siteStorage(ctx.state.site).tempDir(),
      maxFileSize: conf.max_file_size,
    });
  }
  const body = ctx.request.body;
  const fields: Record<string, string> = {};
  if (body && typeof body === 'object' && !Array.isArray(body))
    for (const [key, value] of Object.entries(body as Record<string, unknown>))
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        fields[key] = String(value);
  return { fields };
}

/** Stores the temporary file under `name` (or a server-made variant when taken); the key it got. */
async function storeBytes(
  ctx: AppContext,
  file: UploadedPart,
  name: string,
  isPrivate: boolean,
): Promise<StorageKey> {
  const store = siteStorage(ctx.state.site);
  let key: StorageKey = { isPrivate, name };
  for (let attempt = 0; attempt < 8; attempt++) {
    if (await store.put(key, file.path, file.hash)) return key;
    key = { isPrivate, name: collisionName(name) };
  }
  throw new ValidationError('Could not find a free name for the file');
}

/** Inserts the File document; `uploaded` marks one whose URL and facts the upload itself set. */
async function insertFile(ctx: AppContext, data: DocData, uploaded: boolean): Promise<DocData> {
  const caller = callerOf(ctx);
  const tx = new DocumentTransaction(caller.site, caller.user);
  // A Guest has no right on File: an allowed guest upload is inserted on the site's behalf, as Frappe does.
  tx.ignorePermissions = caller.user.name === 'Guest';
  const doc = await tx.run(async () => {
    const created = tx.newDoc('File', data);
    if (uploaded) markUploaded(created);
    await created.insert();
    return created;
  });
  const binding = caller.site.registry.get('File');
  if (!binding) throw new ValidationError('File DocType is missing');
  ctx.state.messages.push(...tx.messages);
  return readableDoc(caller, binding, serializeDoc(binding, caller.site.registry, doc, caller.version));
}

/**
 * Stores the uploaded bytes under the File's own name (the store keeps identical content once: names are links to one
 * blob) and records the File; the temp file never remains. Reusing another File's stored name would hand this File
 * that name and URL (another user's private file name), so only the bytes are shared, never a name.
 */
async function saveUpload(
  ctx: AppContext,
  file: UploadedPart,
  base: DocData,
  fileName: string,
): Promise<DocData> {
  const { site } = ctx.state;
  const isPrivate = Number(base.is_private) === 1;
  if (file.size === 0) throw new ValidationError('File is empty');
  if (!/^[0-9a-f]{64}$/.test(file.hash)) throw new ValidationError('Could not hash the upload');
  return withLock(file.hash, async () => {
    const key = await storeBytes(ctx, file, fileName, isPrivate);
    const data: DocData = {
      ...base,
      file_url: fileUrlOf(key),
      file_size: file.size,
      content_hash: file.hash,
      file_type: extensionOf(fileName).slice(1).toUpperCase() || null,
    };
    const store = siteStorage(site);
    let saved: DocData;
    try {
      saved = await insertFile(ctx, data, true);
    } catch (err) {
      // The temporary file is a link to the blob as well: it goes first, so the blob goes with the name when no File
      // holds it (a refused upload leaves no bytes behind).
      await rm(file.path, { force: true });
      const url = fileUrlOf(key);
      const inUse = async () => Boolean(await site.db.knex('tabFile').where('file_url', url).first('name'));
      if (!(await inUse())) await store.delete(key, { contentHash: file.hash, inUse });
      throw err;
    }
    // Another process may have deleted the last other File naming these bytes just before this row was committed:
    // the bytes are still in the temporary file, so they are stored again under the same name.
    if (!(await store.exists(key))) await store.put(key, file.path, file.hash);
    return saved;
  });
}

/** upload_file: the File document created (200, like every method). */
export async function uploadFile(ctx: AppContext): Promise<unknown> {
  const { site, user } = ctx.state;
  if (user.name === 'Guest' && !Number((await loadSettings(site)).allow_guests_to_upload_files))
    throw new AuthenticationError('Guest uploads are not allowed; log in first');
  const { fields, file } = await readForm(ctx);
  try {
    assertCsrfToken(
      ctx,
      { ignoreCsrf: site.config.site.ignore_csrf, allowedReferrers: site.config.site.allowed_referrers },
      fields.csrf_token,
    );
    const f = Object.fromEntries(TEXT_FIELDS.map((k) => [k, fields[k]?.trim() ?? ''])) as Record<
      string,
      string
    >;
    if (Boolean(f.doctype) !== Boolean(f.docname))
      throw new ValidationError('doctype and docname go together');
    if (f.doctype) await assertMayAttach(site, user, f.doctype, f.docname as string);
    const base: DocData = {
      is_private: truthy(fields.is_private) ? 1 : 0,
      folder: f.folder || 'Home',
      ...(f.doctype
        ? {
            attached_to_doctype: f.doctype,
            attached_to_name: f.docname,
            attached_to_field: f.fieldname || null,
          }
        : {}),
    };
    if (file) {
      const fileName = sanitiseFileName(f.file_name || file.clientName || 'file');
      return await saveUpload(ctx, file, { ...base, file_name: fileName }, fileName);
    }
    if (f.file_url) {
      // Another File of this site, attached again (never fetched: a remote URL is refused by the File rules).
      // is_private comes from the File whose URL it is (the File rules copy it), not from the form.
      const rest: DocData = { ...base };
      delete rest.is_private;
      return await insertFile(ctx, { ...rest, file_url: f.file_url, file_name: f.file_name || null }, false);
    }
    throw new ValidationError('No file attached: send a `file` part or a `file_url`');
  } finally {
    if (file) await rm(file.path, { force: true });
  }
}
