// List-shaped operations: a page of documents and the count of a filter, both through the one query engine, with the
// reader's access (readable fields, row restriction) applied to every part of the query.
import type { DocData } from '../document/store';
import { DataError } from '../errors/errors';
import { queryAccess } from '../permissions/query-access';
import { buildCountQuery, buildListQuery, packedColumns, pageDecoder, type PageDecoder } from '../query/build-query';
import { attachChildRows } from '../query/child-rows';
import type { QueryScope } from '../query/columns';
import { expandLinks } from '../query/expand-links';
import type { FilterNode } from '../query/filter-tree';
import { parseListRequest, parseWhere, type ListRequest } from '../query/list-plan';
import { cachedPlan, planKey } from '../query/plan-cache';
import { runCount, runSelect, type CompiledSlot } from '../query/run-query';
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

/** A checked filter tree with its compiled COUNT. */
interface CountPlan {
  filters: FilterNode;
  slot: CompiledSlot;
}

/** A cached list request with its compiled SELECT, row decoder and COUNT. */
interface ListEntry {
  request: ListRequest;
  slot: CompiledSlot;
  /** The decoder of the result columns it was made for. */
  decoder?: { columns: string[]; decode: PageDecoder };
  count?: CountPlan;
}

async function scopeFor(caller: Caller, doctype: string, op: 'list' | 'count'): Promise<QueryScope> {
  const binding = bindingFor(caller, doctype, op);
  const access = await queryAccess(caller.site, caller.user, binding.meta, 'read');
  return { site: caller.site, user: caller.user, binding, access };
}

async function count(scope: QueryScope, plan: CountPlan): Promise<number> {
  const n = await runCount(scope.site, () => buildCountQuery(scope.site.db.knex, { scope, filters: plan.filters }), plan.slot);
  if (!Number.isSafeInteger(n)) throw new DataError('count out of range');
  return n;
}

/**
 * Lists documents from Frappe-style parameters: `fields`, `filters`, `or_filters`, `order_by`, `group_by`, paging
 * (v1 `limit_start`/`limit_page_length`/`limit`, v2 `start`/`limit`), `as_dict`, `expand`, v2 `include=count`.
 */
export async function listDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<ListPage> {
  const scope = await scopeFor(caller, doctype, 'list');
  const cached = await cachedPlan(
    caller.site,
    planKey('list', caller, doctype, scope.access, params),
    async (): Promise<ListEntry> => ({ request: await parseListRequest(scope, params, caller.version), slot: {} }),
    // Link-target columns carry the target DocType's access from parse time: such plans are parsed per request.
    ({ request }) => !request.plan.selection.items.some((i) => i.ref?.source.kind === 'link'),
  );
  const request: ListRequest = cached.request;
  const plan = { ...request.plan, scope };
  let rows: DocData[] = [];
  if (request.pageLength > 0) {
    const knex = caller.site.db.knex;
    const set = await runSelect(caller.site, { build: (packed) => buildListQuery(knex, plan, packed), packedColumns: packedColumns(plan) }, cached.slot);
    if (cached.decoder?.columns !== set.columns) cached.decoder = { columns: set.columns, decode: pageDecoder(plan, set.columns) };
    rows = cached.decoder.decode(set);
  }
  const hasNextPage = rows.length > request.pageLength;
  if (hasNextPage) rows = rows.slice(0, request.pageLength);
  const knex = caller.site.db.knex;
  for (const select of plan.selection.children) await attachChildRows(knex, scope.binding.meta.name, select, rows);
  for (const key of request.hiddenKeys) for (const row of rows) delete row[key];
  if (request.expand.length) await expandLinks(caller.site, caller.user, scope.binding, rows, { only: request.expand, version: caller.version });
  const page: ListPage = { data: request.asDict ? rows : rows.map((r) => Object.values(r)) };
  if (caller.version === 2) page.hasNextPage = hasNextPage;
  if (request.includeCount) page.count = await count(scope, (cached.count ??= { filters: plan.filters, slot: {} }));
  return page;
}

/** Counts the documents matching `filters` (and `or_filters`). */
export async function countDocuments(caller: Caller, doctype: string, params: Record<string, unknown>): Promise<number> {
  const scope = await scopeFor(caller, doctype, caller.version === 1 ? 'list' : 'count');
  const plan = await cachedPlan(caller.site, planKey('count', caller, doctype, scope.access, params), async (): Promise<CountPlan> => ({ filters: parseWhere(scope, params), slot: {} }));
  return count(scope, plan);
}
