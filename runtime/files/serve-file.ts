// GET /files/{name} (public, no credentials) and /private/files/{name} (only to those who may read the File): streamed
// from the store with ETag, Last-Modified, 304, single Range (206/416), the type sniffed from the bytes, nosniff, a
// sandbox CSP, and anything but a raster image as an attachment. A name that is not a plain stored name is 404.
import type { Readable } from 'node:stream';
import { DoesNotExistError, RangeNotSatisfiableError } from '../errors/errors';
import type { AppContext } from '../http/state';
import { refusal } from '../permissions/doctype-permission';
import { filesWithUrl, readableFileWithUrl, seesAllFiles } from './file-access';
import { fileUrlOf, isSafeStoredName } from './file-names';
import { SNIFF_BYTES, sniffType, type SniffedType } from './magic';
import { siteStorage } from './site-files';
import type { ByteRange, FileStorage, StorageKey, StoredStat } from './storage';

/** What is remembered of a stored file's version (key, size, mtime): its sniffed type, and a small file's bytes. */
interface Known {
  type: SniffedType;
  bytes?: Buffer;
}

/** Known files by version: a file is sniffed once, and a small one read once, not per request. */
const known = new Map<string, Known>();
const KNOWN_MAX = 2000;
/** Files up to this size are kept in memory after their first read (at most KNOWN_MAX of them: 128 MiB). */
const SMALL_FILE = 64 * 1024;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The sniffed type of a stored file, and its bytes when it is small (cached by key, size and mtime). */
async function knownOf(store: FileStorage, key: StorageKey, stat: StoredStat): Promise<Known> {
  const id = `${key.isPrivate ? 'p' : 'f'}:${key.name}:${stat.size}:${stat.mtime.getTime()}`;
  const hit = known.get(id);
  if (hit) return hit;
  const small = stat.size <= SMALL_FILE;
  const head = stat.size
    ? await store.get(key, { start: 0, end: (small ? stat.size : Math.min(stat.size, SNIFF_BYTES)) - 1 })
    : undefined;
  const bytes = head ? await readAll(head.stream) : Buffer.alloc(0);
  // A file replaced between stat and read: serve it from the store this time, remember nothing.
  if (small && bytes.length !== stat.size) return { type: sniffType(bytes.subarray(0, SNIFF_BYTES)) };
  const entry: Known = { type: sniffType(bytes.subarray(0, SNIFF_BYTES)), ...(small ? { bytes } : {}) };
  if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value as string);
  known.set(id, entry);
  return entry;
}

/** The one byte range a `Range` header asks for; undefined to send everything; 'unsatisfiable' for 416. */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges, other units or a malformed header: the whole file (RFC 9110 lets a server ignore Range).
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size || !Number.isSafeInteger(start)) return 'unsatisfiable';
  return { start, end };
}

/** A Content-Disposition value that carries the stored name safely (ASCII fallback, RFC 8187 for the rest). */
function disposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\;]/g, '_');
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Throws unless the caller may read the private file at `url` (one answer whether or not it exists), or 404. */
async function assertPrivateAccess(ctx: AppContext, url: string): Promise<void> {
  const { site, user } = ctx.state;
  if (seesAllFiles(user)) {
    if (!(await filesWithUrl(site, url)).length) throw new DoesNotExistError('File not found');
    return;
  }
  if (!(await readableFileWithUrl(site, user, url))) throw refusal(user, 'No permission to read this file');
}

/**
 * The handler of the file rows (runtime/routes/file-routes.ts): the row's path says public or private, its `{name+}`
 * capture names the file, its status is a whole file's.
 */
export async function serveFile(
  ctx: AppContext,
  params: { name: string },
  row: { path: string; status: number },
): Promise<void> {
  const isPrivate = row.path.startsWith('/private/');
  const name = params.name;
  // `..`, separators, NUL, `%` (double encoding), leading dots: never a stored name, in any spelling.
  if (!isSafeStoredName(name)) throw new DoesNotExistError('File not found');
  const key: StorageKey = { isPrivate, name };
  if (isPrivate) await assertPrivateAccess(ctx, fileUrlOf(key));
  const store = siteStorage(ctx.state.site);
  const stat = await store.stat(key);
  if (!stat) throw new DoesNotExistError('File not found');
  const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtime.getTime()).toString(16)}"`;
  const lastModified = stat.mtime.toUTCString();
  ctx.set('ETag', etag);
  ctx.set('Last-Modified', lastModified);
  ctx.set('Cache-Control', isPrivate ? 'private, no-cache' : 'public, no-cache');
  const inm = ctx.get('if-none-match');
  const ims = ctx.get('if-modified-since');
  const notModified = inm
    ? inm.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')
    : ims !== '' && Date.parse(ims) >= Math.floor(stat.mtime.getTime() / 1000) * 1000;
  if (notModified) {
    ctx.status = 304;
    return;
  }
  const ifRange = ctx.get('if-range');
  const rangeHeader = ctx.get('range');
  const range =
    rangeHeader && (!ifRange || ifRange === etag || ifRange === lastModified)
      ? parseRange(rangeHeader, stat.size)
      : undefined;
  if (range === 'unsatisfiable')
    throw new RangeNotSatisfiableError(`Range not satisfiable: the file has ${stat.size} bytes`, {
      headers: { 'Content-Range': `bytes */${stat.size}` },
    });
  const { type, bytes } = await knownOf(store, key, stat);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set(
    'Content-Security-Policy',
    "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'",
  );
  ctx.set('Content-Disposition', disposition(type.inline ? 'inline' : 'attachment', name));
  ctx.type = type.type;
  if (range) {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`);
  } else ctx.status = row.status;
  if (bytes) {
    ctx.body = range ? bytes.subarray(range.start, range.end + 1) : bytes;
    return;
  }
  const found = await store.get(key, range);
  if (!found) throw new DoesNotExistError('File not found');
  ctx.body = found.stream;
  ctx.length = range ? range.end - range.start + 1 : stat.size;
}
