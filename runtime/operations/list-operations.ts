// List-shaped operations: a page of documents and the count of a filter, both through the one query engine, with the
// reader's access (readable fields, row restriction) applied to every part of the query.
import type { DocData } from '../db/row-store';
import { DataError } from '../errors/errors';
import { intParam } from '../http/params';
import { childQueryAccess, parentFor } from '../permissions/child-access';
import { queryAccess, readAccessTo } from '../permissions/query-access';
import {
  buildCountQuery,
  buildListQuery,
  packedColumns,
  pageDecoder,
  type PageDecoder,
} from '../query/build-query';
import { attachChildRows } from '../query/child-rows';
import type { QueryScope } from '../query/columns';
import { expandLinks } from '../query/expand-links';
import type { FilterNode } from '../query/filter-tree';
import { makeCursor } from '../query/cursor';
import { parseListRequest, parseWhere, type ListRequest } from './list-plan';
import { cachedPlan, planKey } from '../query/plan-cache';
import type { CompiledSlot } from '../db/compiled-query';
import { runCount, runSelect } from '../query/run-query';
import type { Caller } from '../document/caller';
import { bindingFor } from './doctype-binding';

/** A page of a list. */
export interface ListPage {
  /** Rows as objects, or as value lists (`as_dict=0`). */
  data: DocData[] | unknown[][];
  /** v2: whether another page follows. */
  hasNextPage?: boolean;
  /** v2 `include=count`: the number of rows the filters match. */
  count?: number;
  /** v2 `cursor` paging: the cursor of the next page, null on the last. */
  nextCursor?: string | null;
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

async function scopeFor(
  caller: Caller,
  doctype: string,
  op: 'list' | 'count',
  params: Record<string, unknown>,
): Promise<QueryScope> {
  const child = caller.site.registry.get(doctype);
  const { parent } = params;
  if (child?.meta.istable && parent !== undefined && parent !== null && parent !== '') {
    const access = await childQueryAccess(
      caller.site,
      caller.user,
      child,
      parentFor(caller.site, child, parent),
    );
    return { site: caller.site, binding: child, access, accessTo: readAccessTo(caller.site, caller.user) };
  }
  const binding = bindingFor(caller, doctype, op);
  const access = await queryAccess(caller.site, caller.user, binding.meta, 'read');
  return { site: caller.site, binding, access, accessTo: readAccessTo(caller.site, caller.user) };
}

async function count(scope: QueryScope, plan: CountPlan): Promise<number> {
  const n = await runCount(
    scope.site,
    () => buildCountQuery(scope.site.db.knex, { scope, filters: plan.filters }),
    plan.slot,
  );
  if (!Number.isSafeInteger(n)) throw new DataError('count out of range');
  return n;
}

/** A list answer whose rows are already JSON text, for the REST handlers to send as is. */
export interface SerializedListPage {
  /** The JSON text of the page's rows (what `ListPage.data` would serialize to). */
  json: string;
  hasNextPage?: boolean;
  count?: number;
  nextCursor?: string | null;
  /**
   * The whole response body, kept with a remembered answer by the REST handler that first sends it (never set on an
   * answer with a count: those are copies made per request).
   */
  body?: Buffer;
}

/** Plans reading Link-target columns carry the target DocType's access from parse time: they are parsed per request. */
const keepPlan = ({ request }: ListEntry): boolean =>
  !request.plan.selection.items.some((i) => i.ref?.source.kind === 'link');

/**
 * Lists documents from Frappe-style parameters: `fields`, `filters`, `or_filters`, `order_by`, `group_by`, paging
 * (v1 `limit_start`/`limit_page_length`/`limit`, v2 `start`/`limit`), `as_dict`, `expand`, v2 `include=count`.
 */
export async function listDocuments(
  caller: Caller,
  doctype: string,
  params: Record<string, unknown>,
): Promise<ListPage> {
  return (await list(caller, doctype, params, false)) as ListPage;
}

/**
 * The same answer as `listDocuments`, with the rows as JSON text. A page read from remembered rows (SQLite, database
 * unchanged) by a cached plan, with no child rows or expanded links to fetch, is serialized once and its text reused
 * until the rows are dropped: stringifying 20 rows cost more than the rest of a remembered list request.
 */
export async function listDocumentsSerialized(
  caller: Caller,
  doctype: string,
  params: Record<string, unknown>,
): Promise<SerializedListPage> {
  return (await list(caller, doctype, params, true)) as SerializedListPage;
}

/** Whether two result column lists are the same names in the same order. */
function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function list(
  caller: Caller,
  doctype: string,
  params: Record<string, unknown>,
  serialized: boolean,
): Promise<ListPage | SerializedListPage> {
  const scope = await scopeFor(caller, doctype, 'list', params);
  const key = planKey('list', caller, doctype, scope.access, params);
  const cached = await cachedPlan(
    caller.site,
    key,
    async (): Promise<ListEntry> => ({
      request: await parseListRequest(scope, params, caller.version),
      slot: {},
    }),
    keepPlan,
  );
  const request: ListRequest = cached.request;
  const plan = { ...request.plan, scope };
  const knex = caller.site.db.knex;
  let rows: DocData[] = [];
  let reuse: Map<object, unknown> | undefined;
  let nextCursor: string | null | undefined = request.cursor ? null : undefined;
  if (request.pageLength > 0) {
    const set = await runSelect(
      caller.site,
      { build: (packed) => buildListQuery(knex, plan, packed), packedColumns: packedColumns(plan) },
      cached.slot,
    );
    const { keyset } = plan;
    const last = set.rows.length > request.pageLength ? set.rows[request.pageLength - 1] : undefined;
    if (keyset && last)
      nextCursor = makeCursor(
        keyset.shape,
        keyset.keys.map((key) => last[set.columns.indexOf(`f${key.item}`)]),
      );
    // The text may be kept with the rows only for a plan that stays cached (it is the key) and needs no other reads.
    if (
      serialized &&
      set.derived &&
      key !== undefined &&
      keepPlan(cached) &&
      plan.selection.children.length === 0 &&
      request.expand.length === 0
    ) {
      reuse = set.derived;
      const known = reuse.get(cached) as SerializedListPage | undefined;
      if (known) return withCount(scope, cached, known);
    }
    // MariaDB's rows come with a new columns array each time: compared by content, the decoder is built once.
    let decoder = cached.decoder;
    if (!decoder || !sameColumns(decoder.columns, set.columns))
      cached.decoder = decoder = { columns: set.columns, decode: pageDecoder(plan, set.columns) };
    rows = decoder.decode(set);
  }
  const hasNextPage = rows.length > request.pageLength;
  if (hasNextPage) rows = rows.slice(0, request.pageLength);
  for (const select of plan.selection.children)
    await attachChildRows(knex, scope.binding.meta.name, select, rows);
  for (const hidden of request.hiddenKeys) for (const row of rows) delete row[hidden];
  if (request.expand.length)
    await expandLinks(caller.site, scope.accessTo, scope.binding, rows, {
      only: request.expand,
      version: caller.version,
    });
  const data = request.asDict ? rows : rows.map((r) => Object.values(r));
  if (!serialized) {
    const page: ListPage = { data };
    if (caller.version === 2) page.hasNextPage = hasNextPage;
    if (nextCursor !== undefined) page.nextCursor = nextCursor;
    return withCount(scope, cached, page);
  }
  const answer: SerializedListPage = { json: JSON.stringify(data) };
  if (caller.version === 2) answer.hasNextPage = hasNextPage;
  if (nextCursor !== undefined) answer.nextCursor = nextCursor;
  reuse?.set(cached, answer);
  return withCount(scope, cached, answer);
}

/** The page with v2's `include=count` added (a copy: a remembered answer is shared). */
async function withCount<T extends ListPage | SerializedListPage>(
  scope: QueryScope,
  cached: ListEntry,
  page: T,
): Promise<T> {
  if (!cached.request.includeCount) return page;
  return {
    ...page,
    body: undefined,
    count: await count(scope, (cached.count ??= { filters: cached.request.plan.filters, slot: {} })),
  };
}

/**
 * Counts the documents matching `filters` (and `or_filters`). In v2 a positive `limit` caps the answer, as Frappe's
 * reportview.get_count (the v2 count endpoint) counts at most `limit` rows.
 */
export async function countDocuments(
  caller: Caller,
  doctype: string,
  params: Record<string, unknown>,
): Promise<number> {
  const scope = await scopeFor(caller, doctype, caller.version === 1 ? 'list' : 'count', params);
  const cap = caller.version === 2 ? intParam(params, 'limit', 0) : 0;
  const plan = await cachedPlan(
    caller.site,
    planKey('count', caller, doctype, scope.access, params),
    async (): Promise<CountPlan> => ({ filters: parseWhere(scope, params), slot: {} }),
  );
  const n = await count(scope, plan);
  return cap > 0 ? Math.min(n, cap) : n;
}
