// Reads an upload's multipart body as a stream: the `file` part goes straight to a temporary file (hashed on the way),
// the other parts are short text fields. Nothing is kept in memory beyond the fields; a failure removes the temp file.
import { randomBytes } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import formidable from 'formidable';
import { BadRequestError, RequestEntityTooLargeError } from '../errors/errors';
import type { AppContext } from '../http/state';

/** The uploaded file, written to a temporary file. */
export interface UploadedPart {
  /** The temporary file (the caller moves it into the store or removes it). */
  path: string;
  size: number;
  /** SHA-256 of the bytes, hex. */
  hash: string;
  /** The file name the client sent with the part. */
  clientName: string;
}

/** A parsed upload form. */
export interface UploadForm {
  fields: Record<string, string>;
  file?: UploadedPart;
}

/** Limits of one upload. */
export interface UploadLimits {
  /** Folder of the temporary file. */
  tempDir: string;
  /** Largest file, in bytes (413 above). */
  maxFileSize: number;
}

/** Most text fields one upload may carry (upload_file takes nine). */
const MAX_FIELDS = 32;
/** Most bytes of all text fields together. */
const MAX_FIELDS_SIZE = 64 * 1024;

/** Formidable's error codes that mean "too large" (the file, the field count or size, the part count). */
const TOO_LARGE = new Set([1006, 1007, 1009, 1015, 1016]);

/**
 * Removes a refused upload's temp file once its write stream has closed: the stream opens the file asynchronously,
 * so a removal that does not wait for it can come first and leave the file behind.
 */
async function removeTemp(file: unknown): Promise<void> {
  const { filepath, _writeStream: stream } = file as { filepath: string; _writeStream?: WriteStream | null };
  if (stream && !stream.closed) {
    await new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      stream.destroy();
    });
  }
  await rm(filepath, { force: true });
}

/** Streams the request's multipart body: `file` to a temp file, text fields into `fields`. */
export async function readUploadForm(ctx: AppContext, limits: UploadLimits): Promise<UploadForm> {
  const temps: unknown[] = [];
  const form = formidable({
    uploadDir: limits.tempDir,
    maxFiles: 1,
    maxFileSize: limits.maxFileSize,
    maxTotalFileSize: limits.maxFileSize,
    allowEmptyFiles: true,
    minFileSize: 0,
    maxFields: MAX_FIELDS,
    maxFieldsSize: MAX_FIELDS_SIZE,
    hashAlgorithm: 'sha256',
    // The temp name is ours: nothing of the client's name reaches the file system.
    filename: () => `upload-${process.pid}-${randomBytes(12).toString('hex')}`,
    filter: (part) => part.name === 'file',
  });
  form.on('fileBegin', (_name, file) => temps.push(file));
  try {
    const [fields, files] = await form.parse(ctx.req);
    const flat: Record<string, string> = {};
    for (const [key, values] of Object.entries(fields)) {
      const value = values?.[0];
      if (typeof value === 'string' && !(key in flat)) flat[key] = value;
    }
    const part = files.file?.[0];
    return {
      fields: flat,
      ...(part
        ? {
            file: {
              path: part.filepath,
              size: part.size,
              hash: String(part.hash ?? ''),
              clientName: part.originalFilename ?? '',
            },
          }
        : {}),
    };
  } catch (err) {
    await Promise.all(temps.map(removeTemp));
    const code = (err as { code?: number }).code;
    if (code !== undefined && TOO_LARGE.has(code))
      throw new RequestEntityTooLargeError(
        code === 1007 || code === 1006 || code === 1015
          ? 'Too many parts in the upload'
          : `File is larger than the limit of ${limits.maxFileSize} bytes`,
      );
    throw new BadRequestError(`Malformed upload: ${(err as Error).message.slice(0, 200)}`);
  }
}
