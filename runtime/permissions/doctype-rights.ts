// What a user's roles grant on one DocType: the document rights of the permlevel-0 DocPerm rows (each for every
// document, or only for documents the user owns) and the field levels the user may read and write.
import { RIGHTS, type DocTypeMeta, type Right } from '../meta/types';
import { ADMINISTRATOR, type SessionUser } from '../site';

/** How far a right reaches: every document, or only those the user owns (`if_owner` rows). */
export type Reach = 'all' | 'owner';

/** The rights of one set of roles on one DocType. */
export interface DocTypeRights {
  /** Document rights (permlevel 0 rows); a right that is absent is not granted. */
  doc: ReadonlyMap<Right, Reach>;
  /** Field levels the user may read (a field is readable when its permlevel is in here). */
  readLevels: ReadonlySet<number>;
  /** Field levels the user may write. */
  writeLevels: ReadonlySet<number>;
  /** True for Administrator: every right and every level. */
  all: boolean;
}

const EVERYTHING: ReadonlyMap<Right, Reach> = new Map(RIGHTS.map((r) => [r, 'all'] as const));
const ADMIN_RIGHTS: DocTypeRights = {
  doc: EVERYTHING,
  readLevels: new Set(),
  writeLevels: new Set(),
  all: true,
};
/** Rights that only mean something on a submittable DocType (Frappe forces them to 0 elsewhere). */
const SUBMIT_RIGHTS: ReadonlySet<Right> = new Set(['submit', 'cancel', 'amend']);

const cache = new WeakMap<DocTypeMeta, WeakMap<ReadonlySet<string>, DocTypeRights>>();

function compute(meta: DocTypeMeta, roles: ReadonlySet<string>): DocTypeRights {
  const doc = new Map<Right, Reach>();
  const readLevels = new Set<number>();
  const writeLevels = new Set<number>();
  for (const row of meta.permissions) {
    if (!roles.has(row.role)) continue;
    for (const right of row.rights) {
      if (right === 'read') readLevels.add(row.permlevel);
      if (right === 'write') writeLevels.add(row.permlevel);
      if (
        row.permlevel !== 0 ||
        (SUBMIT_RIGHTS.has(right) && !meta.isSubmittable) ||
        (right === 'import' && !meta.allowImport)
      )
        continue;
      if (!row.ifOwner) doc.set(right, 'all');
      else if (!doc.has(right)) doc.set(right, 'owner');
    }
  }
  // Level 0 is readable with any read right on documents (an if_owner read row included).
  if (doc.has('read')) readLevels.add(0);
  if (doc.has('write')) writeLevels.add(0);
  return { doc, readLevels, writeLevels, all: false };
}

/** The rights `user` holds on `meta` (Administrator: everything); memoized per DocType and role set (one map lookup). */
export function rightsFor(user: SessionUser, meta: DocTypeMeta): DocTypeRights {
  if (user.name === ADMINISTRATOR) return ADMIN_RIGHTS;
  let byRoles = cache.get(meta);
  if (!byRoles) cache.set(meta, (byRoles = new WeakMap()));
  let rights = byRoles.get(user.roles);
  if (!rights) byRoles.set(user.roles, (rights = compute(meta, user.roles)));
  return rights;
}

/** True when the rights let the user read a field at `permlevel` (Administrator reads everything). */
export function readsLevel(rights: DocTypeRights, permlevel: number): boolean {
  return rights.all || rights.readLevels.has(permlevel);
}

/** True when the rights let the user write a field at `permlevel`. */
export function writesLevel(rights: DocTypeRights, permlevel: number): boolean {
  return rights.all || rights.writeLevels.has(permlevel);
}
