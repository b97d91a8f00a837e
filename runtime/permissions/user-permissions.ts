// User Permissions (the `User Permission` DocType): a user restricted to some values of a DocType sees only documents
// whose name (for that DocType) or Link fields (elsewhere) hold one of them. Cached per user for a few seconds.
import type { DocData, Queryable } from '../db/row-store';
import type { DocTypeMeta } from '../meta/types';
import { and, cond, or, type FilterNode } from '../query/filter-tree';
import type { Registry } from '../registry/registry';
import { ADMINISTRATOR, type Site } from '../site';
import { SitePlugin } from '../site';

interface Row {
  allow: string;
  forValue: string;
  /** undefined: applies to every DocType; otherwise only to this one. */
  applicableFor?: string;
}

/** The User Permissions of one user, with the allowed values per (restricted DocType, DocType being accessed) memoized. */
export class UserPermissions {
  private readonly byAllow = new Map<string, Row[]>();
  private readonly allowedMemo = new Map<string, ReadonlySet<string> | undefined>();
  private readonly restrictionMemo = new WeakMap<DocTypeMeta, { tree?: FilterNode }>();
  private readonly restrictsMemo = new WeakMap<DocTypeMeta, boolean>();

  constructor(rows: Row[]) {
    for (const row of rows) {
      const list = this.byAllow.get(row.allow) ?? [];
      list.push(row);
      this.byAllow.set(row.allow, list);
    }
  }

  /** True when the user has no User Permission at all (nothing to check). */
  get empty(): boolean {
    return this.byAllow.size === 0;
  }

  /** The values of `allow` the user is restricted to when accessing `doctype`; undefined: not restricted. */
  allowed(allow: string, doctype: string): ReadonlySet<string> | undefined {
    const key = `${allow}\u0000${doctype}`;
    if (this.allowedMemo.has(key)) return this.allowedMemo.get(key);
    const rows = (this.byAllow.get(allow) ?? []).filter(
      (r) => r.applicableFor === undefined || r.applicableFor === doctype,
    );
    const values = rows.length ? new Set(rows.map((r) => r.forValue)) : undefined;
    this.allowedMemo.set(key, values);
    return values;
  }

  /** The rows of `meta` the user may reach, as a filter tree on its name and Link fields; undefined: all rows. */
  restriction(meta: DocTypeMeta): FilterNode | undefined {
    const hit = this.restrictionMemo.get(meta);
    if (hit) return hit.tree;
    const parts: FilterNode[] = [];
    const own = this.allowed(meta.name, meta.name);
    if (own) parts.push(cond('name', 'in', [...own]));
    for (const field of meta.fields) {
      if (field.fieldtype !== 'Link' || !field.options || field.ignoreUserPermissions) continue;
      const values = this.allowed(field.options, meta.name);
      // An empty link is allowed (Frappe without apply_strict_user_permissions).
      if (values)
        parts.push(or(cond(field.fieldname, 'in', [...values]), cond(field.fieldname, 'is', 'not set')));
    }
    const tree = parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : and(...parts);
    this.restrictionMemo.set(meta, tree ? { tree } : {});
    return tree;
  }

  /** The first Link value of `data` (a document of `doctype`, or a child row of one) outside the allowed values. */
  deniedLink(
    meta: DocTypeMeta,
    doctype: string,
    data: DocData,
  ): { fieldname: string; target: string } | undefined {
    for (const field of meta.fields) {
      if (field.fieldtype !== 'Link' || !field.options || field.ignoreUserPermissions) continue;
      const value = data[field.fieldname];
      if (value === undefined || value === null || value === '') continue;
      const values = this.allowed(field.options, doctype);
      if (values && !values.has(String(value))) return { fieldname: field.fieldname, target: field.options };
    }
    return undefined;
  }

  /**
   * False when allowsDoc accepts every document of `meta` (no User Permission bears on its name, its Link fields or its
   * child rows' Link fields): then a read right on all documents decides without the document. Memoized per DocType.
   */
  restricts(meta: DocTypeMeta, registry: Registry): boolean {
    if (this.empty) return false;
    const hit = this.restrictsMemo.get(meta);
    if (hit !== undefined) return hit;
    const linksRestricted = (fields: DocTypeMeta['fields']) =>
      fields.some(
        (f) =>
          f.fieldtype === 'Link' &&
          !!f.options &&
          !f.ignoreUserPermissions &&
          this.allowed(f.options, meta.name) !== undefined,
      );
    const restricts =
      this.allowed(meta.name, meta.name) !== undefined ||
      linksRestricted(meta.fields) ||
      meta.fields.some((f) => {
        const child = f.fieldtype === 'Table' && f.options ? registry.get(f.options) : undefined;
        return child !== undefined && linksRestricted(child.meta.fields);
      });
    this.restrictsMemo.set(meta, restricts);
    return restricts;
  }

  /** True when a stored document (name, Link fields, child rows' Link fields) lies inside the user's permissions. */
  allowsDoc(meta: DocTypeMeta, registry: Registry, data: DocData): boolean {
    if (this.empty) return true;
    const own = this.allowed(meta.name, meta.name);
    if (own && !own.has(String(data.name))) return false;
    if (this.deniedLink(meta, meta.name, data)) return false;
    for (const field of meta.fields) {
      if (field.fieldtype !== 'Table' || !field.options) continue;
      const child = registry.get(field.options);
      const rows = data[field.fieldname];
      if (!child || !Array.isArray(rows)) continue;
      if ((rows as DocData[]).some((row) => this.deniedLink(child.meta, meta.name, row))) return false;
    }
    return true;
  }
}

const NONE = new UserPermissions([]);
const TTL_MS = 5_000;
/** Bumped by every forget: caches of an older generation are dropped on their next use. */
let generation = 0;

/** The site's User Permissions by user, and the generation they were read under (read by every list and write). */
const CACHES = new SitePlugin<{
  users: Map<string, { perms: UserPermissions; at: number }>;
  generation: number;
}>('user permissions', () => ({ users: new Map(), generation }));

/** Drops cached User Permissions (after a User Permission is written or deleted). */
export function forgetUserPermissions(): void {
  generation++;
}

/**
 * The User Permissions of `user` on `site` (none for Administrator and Guest); cached for a few seconds. Inside a
 * write pass the transaction as `q` (SQLite has one connection: a query beside the open transaction would wait on it).
 */
export async function loadUserPermissions(
  site: Site,
  user: string,
  q: Queryable = site.db.knex,
): Promise<UserPermissions> {
  if (user === ADMINISTRATOR || user === 'Guest' || !site.registry.get('User Permission')) return NONE;
  const state = CACHES.of(site);
  if (state.generation !== generation) {
    state.users = new Map();
    state.generation = generation;
  }
  const cache = state.users;
  const hit = cache.get(user);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.perms;
  const readIn = generation;
  const rows = (await q('tabUser Permission')
    .where('user', user)
    .select('allow', 'for_value', 'apply_to_all_doctypes', 'applicable_for')) as Record<string, unknown>[];
  const perms = rows.length
    ? new UserPermissions(
        rows.map((r) => {
          const applicableFor =
            Number(r.apply_to_all_doctypes) === 1 || !r.applicable_for ? undefined : String(r.applicable_for);
          return {
            allow: String(r.allow),
            forValue: String(r.for_value),
            ...(applicableFor ? { applicableFor } : {}),
          };
        }),
      )
    : NONE;
  // Rows read while a User Permission was being written may be stale: use them, but do not keep them.
  if (readIn === generation) cache.set(user, { perms, at: Date.now() });
  return perms;
}
