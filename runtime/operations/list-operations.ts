// List-shaped operations: a page of documents and the count of a filter, both through the one query engine, with the
// reader's access (readable fields, row restriction) applied to every part of the query.
import type { DocData } from '../document/store';
import { DataError } from '../errors/errors';
import { queryAccess } from '../permissions/query-access';
import { buildCountQuery, buildListQuery, decodeRows } from '../query/build-query';
import { attachChildRows } from '../query/child-rows';
import type { QueryScope } from '../query/columns';
import { expandLinks } from '../query/expand-links';
import type { FilterNode } from '../query/filter-tree';
import { parseListRequest, parseWhere } from '../query/list-plan';
import { bindingFor, type Caller } from './caller';

/** A page of a list. */
export interface ListPage {
  /** Rows as objects, or as value lists (`as_dict=0`). */
  data: DocData[] | unknown[][];
  /** v2: whether another page follows. */
  hasNextPage?: boolean;
  /** v2 `include=count`: the number of rows the filters match. */
  count?: number;
}

async function scopeFor(caller: Caller, doctype: string, op: 'list' | 'count'): Promise<QueryScope> {
  const binding = bindingFor(caller, doctype, op);
  const access = await queryAccess(caller.site, caller.user, binding.meta, 'read');
  return { site: caller.site, user: caller.user, binding, access };
}

async function count(scope: QueryScope, filters: FilterNode): Promise<number> {
  const [row] = (await buildCountQuery(scope.site.db.knex, { scope, filters })) as { count: number | string }[];
  const n = Number(row?.count ?? 0);
  if (!Number.isSafeInteger(n)) throw new DataError('count out of range');
  return n;
}

/**
 * Lists documents from Frappe-style parameters: `fields`, `filters`, `or_filters`, `order_by`, `group_by`, paging
 * (v1 `limit_start`/`limit_page_length`/`limit`, v2 `start`/`limit`), `as_dict`, `expand`, v2 `include=count`.
 */
export async function listDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<ListPage> {
  const scope = await scopeFor(caller, doctype, 'list');
  const request = await parseListRequest(scope, params, caller.version);
  const { plan } = request;
  const knex = caller.site.db.knex;
  let rows: DocData[] = [];
  if (request.pageLength > 0) rows = decodeRows(plan, (await buildListQuery(knex, plan)) as Record<string, unknown>[]);
  const hasNextPage = rows.length > request.pageLength;
  if (hasNextPage) rows = rows.slice(0, request.pageLength);
  for (const select of plan.selection.children) await attachChildRows(knex, scope.binding.meta.name, select, rows);
  for (const key of request.hiddenKeys) for (const row of rows) delete row[key];
  if (request.expand.length) await expandLinks(caller.site, caller.user, scope.binding, rows, { only: request.expand, version: caller.version });
  const page: ListPage = { data: request.asDict ? rows : rows.map((r) => Object.values(r)) };
  if (caller.version === 2) page.hasNextPage = hasNextPage;
  if (request.includeCount) page.count = await count(scope, plan.filters);
  return page;
}

/** Counts the documents matching `filters` (and `or_filters`). */
export async function countDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<number> {
  const scope = await scopeFor(caller, doctype, caller.version === 1 ? 'list' : 'count');
  return count(scope, parseWhere(scope, params));
}
