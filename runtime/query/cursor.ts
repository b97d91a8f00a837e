// Keyset pagination of v2 lists: `cursor` names the last row of the previous page by its order-by values plus `name`
// (the tiebreak), so a deep page reads from an index position instead of stepping over every row before it. A cursor
// is opaque base64url text, but never trusted: it is parsed against the list's order (DocType metadata) and its values
// are only ever bound, so a hostile or malformed one is 400 DataError, never SQL.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { DataError } from '../errors/errors';
import { NEVER_NULL, type ColumnRef } from './columns';

/** One key column of a cursor: the ORDER BY column, its direction, and the selected item that carries its value. */
export interface CursorKey {
  ref: ColumnRef;
  direction: 'asc' | 'desc';
  /** Index of the selected item whose value (result column `f<item>`) the next cursor takes. */
  item: number;
  /**
   * False for the standard columns the service sets on every write (name, creation, modified, docstatus, idx): their
   * conditions have no NULL branch, so an index on them serves a deep page in either direction.
   */
  nullable: boolean;
}

/** Whether a key column may hold NULL (fields of the DocType may; the standard columns set on every write do not). */
export function keyNullable(ref: ColumnRef): boolean {
  return ref.meta !== undefined || !NEVER_NULL.has(ref.field);
}

/** The cursor paging of a list request: its key columns and, past the first page, the values to continue after. */
export interface CursorPlan {
  keys: CursorKey[];
  /** The shape tag every cursor of this list carries (DocType and order): a cursor of another list is refused. */
  shape: string;
  after?: unknown[];
}

const MAX_CURSOR = 8192;
const MAX_TEXT = 2000;

/** The tag of a list's order: a cursor made for one DocType and order_by is refused by any other. */
export function cursorShape(doctype: string, keys: readonly CursorKey[]): string {
  const text = [doctype, ...keys.map((k) => `${k.ref.field} ${k.direction}`)].join('\u0000');
  return createHash('sha256').update(text).digest('base64url').slice(0, 10);
}

const malformed = () =>
  new DataError('cursor: not a cursor of this list (take next_cursor from the previous page, same order_by)');

function checkValue(key: CursorKey, value: unknown): unknown {
  if (value === null) {
    if (!key.nullable) throw malformed();
    return null;
  }
  const numeric = key.ref.kind === 'integer' || key.ref.kind === 'number' || key.ref.kind === 'check';
  if (numeric) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw malformed();
    return value;
  }
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw malformed();
  return value;
}

/** Reads a cursor sent by a client: the values after which the page starts, checked against the list's keys. */
export function parseCursor(text: string, keys: readonly CursorKey[], shape: string): unknown[] {
  if (text.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(text)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(parsed) || parsed.length !== keys.length + 1 || parsed[0] !== shape) throw malformed();
  return keys.map((key, i) => checkValue(key, parsed[i + 1]));
}

/** The cursor of a page's last row, from its stored values (as read, so that they compare as stored). */
export function makeCursor(shape: string, values: readonly unknown[]): string {
  const plain = values.map((v) => (typeof v === 'bigint' ? Number(v) : v));
  return Buffer.from(JSON.stringify([shape, ...plain]), 'utf8').toString('base64url');
}

/**
 * Adds "rows after `after` in the order of `keys`" to a query: for keys k1..kn, k1 after v1, or k1 = v1 and k2 after
 * v2, and so on. NULLs sort first ascending and last descending, on SQLite and MariaDB alike. The first key also gets a
 * plain range condition (`k1 >= v1` / `k1 <= v1`) when it is not NULL, which lets an index on it start at the cursor.
 */
export function applyCursor(
  q: Knex.QueryBuilder,
  keys: readonly CursorKey[],
  after: readonly unknown[],
  column: (ref: ColumnRef) => string,
): void {
  const first = keys[0];
  const v0 = after[0];
  if (first && v0 !== null) {
    if (first.direction === 'asc') q.where(column(first.ref), '>=', v0 as Knex.Value);
    else if (!first.nullable) q.where(column(first.ref), '<=', v0 as Knex.Value);
    else q.where((w) => w.where(column(first.ref), '<=', v0 as Knex.Value).orWhereNull(column(first.ref)));
  }
  q.where((outer) => {
    keys.forEach((key, i) => {
      outer.orWhere((w) => {
        for (let j = 0; j < i; j++) {
          const col = column((keys[j] as CursorKey).ref);
          if (after[j] === null) w.whereNull(col);
          else w.where(col, '=', after[j] as Knex.Value);
        }
        const col = column(key.ref);
        const v = after[i];
        if (key.direction === 'asc') {
          if (v === null) w.whereNotNull(col);
          else w.where(col, '>', v as Knex.Value);
        } else if (v === null) w.whereRaw('1 = 0');
        else if (!key.nullable) w.where(col, '<', v as Knex.Value);
        else w.where((d) => d.where(col, '<', v as Knex.Value).orWhereNull(col));
      });
    });
  });
}
