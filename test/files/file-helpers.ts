// Helpers of the file tests: uploads through supertest, what the store holds on disk, File rows.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { TestSite } from '../helpers/test-site';

/** The site's files folder (test sites keep it in test/tmp). */
export function filesRoot(t: TestSite): string {
  return t.site.config.filesPath as string;
}

/** Names in a folder of the store (`files`, `private/files`, `tmp/uploads`); empty when missing. */
export function storedNames(t: TestSite, area: 'files' | 'private/files' | 'tmp/uploads'): string[] {
  try {
    return readdirSync(path.join(filesRoot(t), area)).sort();
  } catch {
    return [];
  }
}

/** Every stored or temporary file of the site. */
export function everyStoredFile(t: TestSite): string[] {
  return [
    ...storedNames(t, 'files').map((n) => `files/${n}`),
    ...storedNames(t, 'private/files').map((n) => `private/files/${n}`),
    ...storedNames(t, 'tmp/uploads').map((n) => `tmp/${n}`),
  ];
}

/** Uploads `content` as `fileName` with extra form fields, authenticated by `auth` (an Authorization value). */
export function upload(
  t: TestSite,
  auth: string | undefined,
  content: Buffer | string,
  fileName: string,
  fields: Record<string, string> = {},
  prefix = '/api/method',
) {
  let req = t.http.post(`${prefix}/upload_file`);
  if (auth) req = req.set('Authorization', auth);
  for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
  return req.attach('file', Buffer.isBuffer(content) ? content : Buffer.from(content), {
    filename: fileName,
  });
}

/** File rows (name, file_url, content_hash, attached_to_*). */
export async function fileRows(t: TestSite): Promise<Record<string, unknown>[]> {
  return t.site.db
    .knex('tabFile')
    .select(
      'name',
      'file_name',
      'file_url',
      'is_private',
      'content_hash',
      'attached_to_doctype',
      'attached_to_name',
    )
    .orderBy('creation');
}
