// List-shaped operations: a page of documents and the count of a filter, both through the query engine.
import type { DocData } from '../document/store';
import { decodeRow } from '../document/store';
import { DataError } from '../errors/errors';
import { boolParam, intParam, jsonParam } from '../http/params';
import { queryAccess } from '../permissions/query-access';
import { buildCountQuery, buildListQuery, parseFields, parseFilters, parseOrderBy } from '../query/list-query';
import { bindingFor, type Caller } from './caller';

/** A page of a list. */
export interface ListPage {
  /** Rows as objects, or as value lists (v1 `as_dict=0`). */
  data: DocData[] | unknown[][];
  /** v2: whether another page follows. */
  hasNextPage?: boolean;
}

/** Lists documents from Frappe-style parameters (`fields`, `filters`, `order_by`, paging). */
export async function listDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<ListPage> {
  const binding = bindingFor(caller, doctype, 'list');
  await queryAccess(caller.site, caller.user, binding.meta, 'read');
  const { site, version } = caller;
  const max = site.config.site.max_page_length;
  const requested = version === 1 ? intParam(params, 'limit_page_length', intParam(params, 'limit', 20)) : intParam(params, 'limit', 20);
  const limit = version === 1 && requested === 0 ? max : Math.min(requested, max);
  const start = intParam(params, version === 1 ? 'limit_start' : 'start', 0);
  const list = {
    fields: parseFields(binding.meta, jsonParam(params, 'fields')),
    conditions: parseFilters(binding.meta, jsonParam(params, 'filters')),
    order: parseOrderBy(binding.meta, params.order_by),
    limit: version === 2 ? limit + 1 : limit,
    start,
  };
  if (version === 2 && limit === 0) return { data: [], hasNextPage: false };
  const rows = ((await buildListQuery(site.db.knex, binding, list)) as Record<string, unknown>[]).map((r) => decodeRow(binding.meta, r));
  if (version === 1) return { data: boolParam(params, 'as_dict', true) ? rows : rows.map((r) => list.fields.map((f) => r[f])) };
  return { data: rows.slice(0, limit), hasNextPage: rows.length > limit };
}

/** Counts the documents matching `filters`. */
export async function countDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<number> {
  const binding = bindingFor(caller, doctype, caller.version === 1 ? 'list' : 'count');
  await queryAccess(caller.site, caller.user, binding.meta, 'read');
  const conditions = parseFilters(binding.meta, jsonParam(params, 'filters'));
  const [row] = (await buildCountQuery(caller.site.db.knex, binding, conditions)) as { count: number | string }[];
  const count = Number(row?.count ?? 0);
  if (!Number.isSafeInteger(count)) throw new DataError('count out of range');
  return count;
}
