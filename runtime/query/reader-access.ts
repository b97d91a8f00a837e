// What the query engine needs of the reader's permissions: the fields and rows of a DocType the reader may see. The
// permission engine decides it (permissions/query-access.ts); whoever runs a query hands it in (the scope's `access`,
// and `accessTo` for a Link's target DocType), so query/ never asks permissions/ itself.
import type { DocTypeMeta } from '../meta/types';
import type { FilterNode } from './filter-tree';

/** The access a user has to one DocType for one right. */
export interface QueryAccess {
  /** True when the user may read (see, filter, sort and group by) the field of `meta` (the DocType or a child DocType). */
  canReadField(meta: DocTypeMeta, fieldname: string): boolean;
  /** Rows outside this tree are invisible to the user (if_owner, User Permissions, controller restrictions); undefined: no restriction. */
  restriction?: FilterNode;
}

/** The reader's read access to another DocType (a Link's target); throws 401/403 when the reader may not read it. */
export type AccessTo = (meta: DocTypeMeta) => Promise<QueryAccess>;
