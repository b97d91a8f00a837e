// Field levels (permlevel): fields above the levels a user may read leave every document the API returns, a value
// sent for a field the user may not read is refused whatever it is, and a change to a field above the levels the
// user may write is refused naming the field (an unchanged value passes when the user may read the field).
import { defaultValue } from '../db/field-defaults';
import type { DocData } from '../db/row-store';
import { normalizeValue } from '../document/values';
import { isTableType, storesValue } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { Caller } from '../document/caller';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { PermissionError } from '../errors/errors';
import type { SessionUser } from '../site';
import { readsLevel, rightsFor, writesLevel, type DocTypeRights } from './doctype-rights';

const levelsCache = new WeakMap<DocTypeMeta, ReadonlySet<number>>();

/** Every permlevel used by the fields of `meta` and of its child tables. */
function levelsOf(meta: DocTypeMeta, registry: Registry): ReadonlySet<number> {
  let levels = levelsCache.get(meta);
  if (!levels) {
    const set = new Set<number>(meta.fields.map((f) => f.permlevel));
    for (const field of meta.fields) {
      const child = isTableType(field.fieldtype) && field.options ? registry.get(field.options) : undefined;
      for (const cf of child?.meta.fields ?? []) set.add(cf.permlevel);
    }
    levelsCache.set(meta, (levels = set));
  }
  return levels;
}

/** True when the rights read every field level of the DocType: documents pass through unchanged. */
function readsEverything(rights: DocTypeRights, meta: DocTypeMeta, registry: Registry): boolean {
  if (rights.all) return true;
  for (const level of levelsOf(meta, registry)) if (!rights.readLevels.has(level)) return false;
  return true;
}

function strip(meta: DocTypeMeta, registry: Registry, rights: DocTypeRights, data: DocData): DocData {
  const out: DocData = {};
  const fields = new Map(meta.fields.map((f) => [f.fieldname, f]));
  for (const [key, value] of Object.entries(data)) {
    const field = fields.get(key);
    if (field && !readsLevel(rights, field.permlevel)) continue;
    const child =
      field && isTableType(field.fieldtype) && field.options ? registry.get(field.options) : undefined;
    out[key] =
      child && Array.isArray(value)
        ? (value as DocData[]).map((row) => strip(child.meta, registry, rights, row))
        : value;
  }
  return out;
}

/** True when `user` may read `fieldname` of `meta` (a child DocType's field is judged by the parent's `rights`). */
export function canReadField(rights: DocTypeRights, meta: DocTypeMeta, fieldname: string): boolean {
  const field = meta.fields.find((f) => f.fieldname === fieldname);
  if (!field) return true;
  return field.fieldtype !== 'Password' && readsLevel(rights, field.permlevel);
}

/** The document (serialized, child rows included) without the fields above the caller's read levels. */
export function readableDoc(caller: Caller, binding: DocTypeBinding, data: DocData): DocData {
  const rights = rightsFor(caller.user, binding.meta);
  if (readsEverything(rights, binding.meta, caller.site.registry)) return data;
  return strip(binding.meta, caller.site.registry, rights, data);
}

const same = (field: FieldMeta, a: unknown, b: unknown): boolean => {
  const norm = (v: unknown) => {
    if (v === undefined || v === null || v === '') return null;
    try {
      return normalizeValue(field, v) ?? null;
    } catch {
      return v;
    }
  };
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
};

/** True when `row` sets a stored field of `meta` to another value than `old` holds. */
function rowChanged(meta: DocTypeMeta, row: DocData, old: DocData): boolean {
  return meta.fields.some(
    (f) => f.fieldname in row && storesValue(f.fieldtype) && !same(f, row[f.fieldname], old[f.fieldname]),
  );
}

function changedField(
  meta: DocTypeMeta,
  rights: DocTypeRights,
  registry: Registry,
  data: DocData,
  before: DocData | undefined,
  user: string,
): FieldMeta | undefined {
  for (const field of meta.fields) {
    if (!(field.fieldname in data)) continue;
    if (isTableType(field.fieldtype)) {
      const rows = (data[field.fieldname] as DocData[] | undefined) ?? [];
      const old = (before?.[field.fieldname] as DocData[] | undefined) ?? [];
      const child = field.options ? registry.get(field.options) : undefined;
      if (!writesLevel(rights, field.permlevel)) {
        const key = (r: DocData[]) => JSON.stringify(r.map((row) => row.name ?? null));
        if (rows.length !== old.length || (rows.length && key(rows) !== key(old))) return field;
        // The table's level guards its rows' values too, whatever the child fields' own levels.
        if (child && rows.some((row, i) => rowChanged(child.meta, row, old[i] as DocData))) return field;
      }
      if (!child) continue;
      const byName = new Map(old.map((row) => [String(row.name), row]));
      for (const row of rows) {
        const hit = changedField(
          child.meta,
          rights,
          registry,
          row,
          row.name ? byName.get(String(row.name)) : undefined,
          user,
        );
        if (hit) return hit;
      }
      continue;
    }
    if (!storesValue(field.fieldtype) || writesLevel(rights, field.permlevel)) continue;
    const was = before ? before[field.fieldname] : defaultValue(field, user);
    if (!same(field, data[field.fieldname], was)) return field;
  }
  return undefined;
}

function unreadableField(
  meta: DocTypeMeta,
  rights: DocTypeRights,
  registry: Registry,
  data: DocData,
): FieldMeta | undefined {
  for (const field of meta.fields) {
    if (!(field.fieldname in data)) continue;
    if (!readsLevel(rights, field.permlevel)) return field;
    const rows = data[field.fieldname];
    const child =
      isTableType(field.fieldtype) && field.options && Array.isArray(rows)
        ? registry.get(field.options)
        : undefined;
    if (!child) continue;
    for (const row of rows as unknown[]) {
      if (row === null || typeof row !== 'object') continue;
      const hit = unreadableField(child.meta, rights, registry, row as DocData);
      if (hit) return hit;
    }
  }
  return undefined;
}

/**
 * Refuses (403 naming the field) a request body that sends any value, equal to the stored one or not, for a field
 * the user may not read (child rows included): answering 200 for an unchanged value would confirm a guess.
 */
export function refuseUnreadableFields(
  user: SessionUser,
  binding: DocTypeBinding,
  registry: Registry,
  body: DocData,
): void {
  const rights = rightsFor(user, binding.meta);
  if (readsEverything(rights, binding.meta, registry)) return;
  const field = unreadableField(binding.meta, rights, registry, body);
  if (field)
    throw new PermissionError(
      `Not allowed to set ${field.label} (${field.fieldname}): insufficient permission level`,
    );
}

/**
 * Child rows the client sent back without a field it may not write (it may not even see it) keep that field's
 * stored value, so re-sending rows as they were read never wipes what the user cannot see. Mutates the rows.
 */
export function keepUnwritableRowValues(
  user: SessionUser,
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
  stored: DocData,
): void {
  const rights = rightsFor(user, binding.meta);
  if (rights.all) return;
  for (const field of binding.meta.fields) {
    const rows = data[field.fieldname];
    const child =
      isTableType(field.fieldtype) && field.options && Array.isArray(rows)
        ? registry.get(field.options)
        : undefined;
    if (!child) continue;
    const hidden = child.meta.fields.filter(
      (f) => storesValue(f.fieldtype) && !writesLevel(rights, f.permlevel),
    );
    if (!hidden.length) continue;
    const before = new Map(
      ((stored[field.fieldname] as DocData[] | undefined) ?? []).map((row) => [String(row.name), row]),
    );
    for (const row of rows as DocData[]) {
      const old = row.name === undefined || row.name === null ? undefined : before.get(String(row.name));
      if (old) for (const f of hidden) if (!(f.fieldname in row)) row[f.fieldname] = old[f.fieldname];
    }
  }
}

/**
 * Refuses (403 naming the field) a value of `data` above the user's write levels that differs from `stored` (an
 * existing document) or from the field's default (a new one). Child rows are compared by name.
 */
export function checkWriteLevels(
  user: SessionUser,
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
  stored: DocData | undefined,
): void {
  const rights = rightsFor(user, binding.meta);
  if (rights.all) return;
  const field = changedField(binding.meta, rights, registry, data, stored, user.name);
  if (field)
    throw new PermissionError(
      `Not allowed to change ${field.label} (${field.fieldname}): insufficient permission level`,
    );
}
