// The file a Data Import names: a File document the user may read (its `file_url`), its bytes from the site's storage.
import type { Readable } from 'node:stream';
import { DataError, DoesNotExistError } from '../errors/errors';
import { readableFileWithUrl } from '../files/file-access';
import { keyOfUrl } from '../files/file-names';
import { siteStorage } from '../files/site-files';
import type { SessionUser, Site } from '../site';
import { tableKindOf, type TableKind } from './read-table';

/** An import file: its kind and a stream of its bytes. */
export interface ImportSource {
  kind: TableKind;
  stream: Readable;
}

/** Opens the attached file at `url` for `user` (who must be able to read its File document). */
export async function openAttachedFile(site: Site, user: SessionUser, url: unknown): Promise<ImportSource> {
  if (typeof url !== 'string' || url === '') throw new DataError('Data Import has no import_file attached');
  const file = await readableFileWithUrl(site, user, url);
  const key = keyOfUrl(url);
  if (!file || !key) throw new DoesNotExistError('The import file was not found');
  const kind = tableKindOf(String(file.file_name ?? key.name));
  const found = await siteStorage(site).get(key);
  if (!found) throw new DoesNotExistError('The import file was not found');
  return { kind, stream: found.stream };
}
