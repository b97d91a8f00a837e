// Secrets at rest: user passwords as scrypt hashes, API secrets as SHA-256 digests; both compared in constant time.
import {
  createHash,
  randomBytes,
  scrypt,
  timingSafeEqual,
  type BinaryLike,
  type ScryptOptions,
} from 'node:crypto';
import type { Queryable } from '../db/row-store';
import { SYSTEM_TABLES } from '../db/migrate';

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 32;

function scryptAsync(password: BinaryLike, salt: BinaryLike, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A scrypt hash of a password: `scrypt$N$r$p$salt$hash` (base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A hash that matches no password, so unknown users cost the same time as wrong passwords. */
let dummyHash: Promise<string> | undefined;

/** Checks a password against a stored hash in constant time; with no hash, burns the same time and fails. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const parts = (stored ?? (await dummyHash)).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(key, expected) && stored !== undefined;
}

/** SHA-256 digest of an API secret (secrets are random, so a fast digest is enough). */
export function digestSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with a stored digest (raw bytes, or hex as kept in `__Auth`). */
export function secretMatches(secret: string, storedDigest: Buffer | string): boolean {
  const expected = typeof storedDigest === 'string' ? Buffer.from(storedDigest, 'hex') : storedDigest;
  const actual = digestSecret(secret);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Reads a stored secret (password hash or secret digest) of a document field from `__Auth`. */
export async function readAuth(
  q: Queryable,
  doctype: string,
  name: string,
  fieldname: string,
): Promise<string | undefined> {
  const row = (await q(SYSTEM_TABLES.auth).where({ doctype, name, fieldname }).first('password')) as
    { password: string } | undefined;
  return row?.password;
}

/** Writes a stored secret of a document field to `__Auth`. */
export async function writeAuth(
  q: Queryable,
  doctype: string,
  name: string,
  fieldname: string,
  value: string,
): Promise<void> {
  const updated = await q(SYSTEM_TABLES.auth).where({ doctype, name, fieldname }).update({ password: value });
  if (!updated) await q(SYSTEM_TABLES.auth).insert({ doctype, name, fieldname, password: value });
}

/** Deletes every stored secret of a document (its Password fields' rows), as Frappe's delete_all_passwords_for. */
export async function deleteAuth(q: Queryable, doctype: string, name: string): Promise<void> {
  await q(SYSTEM_TABLES.auth).where({ doctype, name }).delete();
}

/** A random string of `length` lower-case hex characters (Frappe's generate_hash). */
export function generateHash(length: number): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}
