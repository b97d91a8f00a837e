// File names: the sanitised base name an upload is stored under, the server-made name on a collision, and the
// file URLs (/files/<name>, /private/files/<name>) that name a stored file.
import { randomBytes } from 'node:crypto';
import { ValidationError } from '../errors/errors';
import type { StorageKey } from './storage';

/** Longest stored name, in characters (extension included). */
export const MAX_FILE_NAME = 140;

/** Windows device names: harmless here, but a file named so cannot be copied to every system. */
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** Characters never kept in a stored name: controls, path separators, quotes, URL and shell/Windows specials. */
const UNSAFE_CHARS = /[\u0000-\u001f\u007f"*:<>?|/\\%#]/g;

/** The extension of `name` with its dot (`.png`), or `''`. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}

/**
 * The name an uploaded file is stored under: the base name only (after `/` and `\`), no control or special characters,
 * no leading dots, reserved device names prefixed, at most MAX_FILE_NAME characters (the extension kept). A NUL is
 * refused (400): it is never an accident.
 */
export function sanitiseFileName(raw: string): string {
  if (raw.includes('\u0000')) throw new ValidationError('File name must not contain a NUL character');
  const base = raw.split(/[/\\]/).pop() ?? '';
  let name = base.replace(UNSAFE_CHARS, '').trim().replace(/^\.+/, '').trim();
  if (RESERVED.test(name)) name = `_${name}`;
  if (!name) name = 'file';
  if (name.length > MAX_FILE_NAME) {
    let ext = extensionOf(name);
    if (ext.length > 16) ext = '';
    name = name.slice(0, MAX_FILE_NAME - ext.length) + ext;
  }
  return name;
}

/** A server-made variant of `name` for when `name` is taken: `stem-<6 hex>.ext`. */
export function collisionName(name: string): string {
  const ext = extensionOf(name);
  const stem = name.slice(0, name.length - ext.length).slice(0, MAX_FILE_NAME - ext.length - 7);
  return `${stem}-${randomBytes(3).toString('hex')}${ext}`;
}

/** True when `name` is a plain base name the store may use (what sanitiseFileName and collisionName produce). */
export function isSafeStoredName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= MAX_FILE_NAME + 8 &&
    !name.startsWith('.') &&
    name === name.replace(UNSAFE_CHARS, '')
  );
}

/** The URL of a stored file. */
export function fileUrlOf(key: StorageKey): string {
  return `${key.isPrivate ? '/private/files/' : '/files/'}${key.name}`;
}

/** The stored file a URL of this site names, or undefined (remote URLs, other paths, unsafe names). */
export function keyOfUrl(url: string): StorageKey | undefined {
  for (const [prefix, isPrivate] of [
    ['/private/files/', true],
    ['/files/', false],
  ] as const) {
    if (!url.startsWith(prefix)) continue;
    const name = url.slice(prefix.length);
    return isSafeStoredName(name) ? { isPrivate, name } : undefined;
  }
  return undefined;
}
