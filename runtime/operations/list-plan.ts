// A list request's parameters (Frappe's names, v1 and v2 paging) parsed into a checked list plan.
import { DataError } from '../errors/errors';
import { boolParam, intParam, jsonParam } from '../http/params';
import type { ListPlan } from '../query/build-query';
import type { ColumnRef, QueryScope } from '../query/columns';
import { cursorShape, keyNullable, parseCursor, type CursorKey } from '../query/cursor';
import { and, type FilterNode } from '../query/filter-tree';
import { parseFields, type SelectItem } from '../query/parse-fields';
import { parseFilters } from '../query/parse-filters';
import { defaultOrder, parseGroupBy, parseOrderBy } from '../query/parse-order';

/** A parsed list request: the plan plus the response options around it. */
export interface ListRequest {
  plan: ListPlan;
  /** Rows the caller asked for (the plan may fetch one more to learn `has_next_page`). */
  pageLength: number;
  asDict: boolean;
  /** Link fields whose values are replaced by the linked documents (`expand`). */
  expand: string[];
  /** v2 `include=count`. */
  includeCount: boolean;
  /** v2 `cursor` paging: the answer carries `next_cursor`. */
  cursor: boolean;
  /** Keys added only to attach child rows, removed before answering. */
  hiddenKeys: string[];
}

/** The user's `filters` and `or_filters` as one tree. */
export function parseWhere(scope: QueryScope, params: Record<string, unknown>): FilterNode {
  const filters = parseFilters(scope, jsonParam(params, 'filters'), 'filters');
  const orFilters = parseFilters(scope, jsonParam(params, 'or_filters'), 'or_filters', 'or');
  return orFilters.kind === 'and' && orFilters.children.length === 0 ? filters : and(filters, orFilters);
}

function pageLength(scope: QueryScope, params: Record<string, unknown>, version: 1 | 2): number {
  const max = scope.site.config.site.max_page_length;
  if (version === 2) return Math.min(intParam(params, 'limit', 20), max);
  const requested = intParam(params, 'limit_page_length', intParam(params, 'limit', 20));
  return requested === 0 ? max : Math.min(requested, max);
}

function sameColumn(a: ColumnRef, b: ColumnRef): boolean {
  return a.field === b.field && a.source.kind === 'main' && b.source.kind === 'main';
}

function checkGrouping(items: SelectItem[], groupBy: ColumnRef[]): void {
  if (!groupBy.length && !items.some((i) => i.kind === 'aggregate')) return;
  for (const item of items) {
    if (item.kind === 'column' && !groupBy.some((g) => sameColumn(g, item.ref))) {
      throw new DataError(`fields: ${item.ref.label} must be in group_by when grouping or aggregating`);
    }
  }
}

function listParam(params: Record<string, unknown>, key: string): string[] {
  const raw = jsonParam(params, key);
  if (raw === undefined || raw === null || raw === '') return [];
  const list = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()) : raw;
  if (!Array.isArray(list) || list.length > 100 || !list.every((v) => typeof v === 'string'))
    throw new DataError(`'${key}' must be a list of names`);
  return list as string[];
}

function parseExpand(scope: QueryScope, params: Record<string, unknown>): string[] {
  const names = listParam(params, 'expand');
  for (const name of names) {
    const field = scope.binding.fieldMap.get(name);
    if (!field || (field.fieldtype !== 'Link' && field.fieldtype !== 'Dynamic Link'))
      throw new DataError(`expand: ${name.slice(0, 80)} is not a Link field of ${scope.binding.meta.name}`);
  }
  return names;
}

/** v2 `include` (only `count` is known); v1 has no such parameter and ignores it, as Frappe's v1 does. */
function parseInclude(params: Record<string, unknown>, version: 1 | 2): boolean {
  if (version === 1) return false;
  const parts = listParam(params, 'include');
  for (const part of parts)
    if (part !== 'count') throw new DataError(`include: unknown part ${part.slice(0, 80)}`);
  return parts.length > 0;
}

/** Parses a list request of API version `version` against the scope's DocType and access. */
export async function parseListRequest(
  scope: QueryScope,
  params: Record<string, unknown>,
  version: 1 | 2,
): Promise<ListRequest> {
  const fields = jsonParam(params, 'fields');
  // JSON text that is a string (`fields="name"`) is malformed: a JSON list, or plain comma-separated names.
  if (typeof fields === 'string' && fields !== params.fields)
    throw new DataError("'fields' must be a JSON list or comma-separated field names, not a JSON string");
  const selection = await parseFields(scope, fields);
  const filters = parseWhere(scope, params);
  const groupBy = await parseGroupBy(scope, params.group_by);
  checkGrouping(selection.items, groupBy);
  const grouped = groupBy.length > 0 || selection.items.some((i) => i.kind === 'aggregate');
  const order =
    (await parseOrderBy(scope, params.order_by, selection.items)) ?? (grouped ? [] : defaultOrder(scope));
  const length = pageLength(scope, params, version);
  const offset = intParam(params, version === 1 ? 'limit_start' : 'start', 0);
  const expand = parseExpand(scope, params);
  const hiddenKeys: string[] = [];
  if (selection.children.length && !selection.items.some((i) => i.key === 'name')) {
    if (grouped) throw new DataError('fields: child rows cannot be combined with group_by or aggregates');
    selection.items.push({
      kind: 'column',
      ref: { source: { kind: 'main' }, field: 'name', kind: 'string', label: 'name' },
      key: 'name',
    });
    hiddenKeys.push('name');
  }
  for (const name of expand) {
    if (!selection.items.some((i) => i.kind === 'column' && i.key === name && i.ref.source.kind === 'main')) {
      throw new DataError(`expand: ${name} must be one of the selected fields`);
    }
  }
  const keyset =
    version === 2 && params.cursor !== undefined
      ? cursorPlan(scope, params.cursor, { selection, order, grouped, offset, hiddenKeys })
      : undefined;
  return {
    plan: {
      scope,
      selection,
      filters,
      groupBy,
      order,
      limit: version === 2 ? length + 1 : length,
      offset,
      ...(keyset ? { keyset } : {}),
    },
    cursor: keyset !== undefined,
    pageLength: length,
    asDict: boolParam(params, 'as_dict', true),
    expand,
    includeCount: parseInclude(params, version),
    hiddenKeys,
  };
}

/**
 * The cursor paging of a v2 list (`cursor`: empty for the first page, else a `next_cursor` received): keyed by the
 * order's columns plus `name`, each read by a selected item (added hidden when the fields leave it out).
 */
function cursorPlan(
  scope: QueryScope,
  raw: unknown,
  parts: {
    selection: ListPlan['selection'];
    order: ListPlan['order'];
    grouped: boolean;
    offset: number;
    hiddenKeys: string[];
  },
): NonNullable<ListPlan['keyset']> {
  if (typeof raw !== 'string') throw new DataError("'cursor' must be a string");
  if (parts.grouped) throw new DataError('cursor: cannot page grouped or aggregated rows');
  if (parts.offset > 0) throw new DataError('cursor: page with cursor or with start, not both');
  const { items } = parts.selection;
  const refs: { ref: ColumnRef; direction: 'asc' | 'desc' }[] = parts.order.map((term) => {
    const item = term.item === undefined ? undefined : items[term.item];
    const ref = term.ref ?? (item?.kind === 'column' ? item.ref : undefined);
    if (!ref || ref.source.kind !== 'main' || ref.kind === 'json')
      throw new DataError('cursor: order_by may name only plain fields of the DocType');
    return { ref, direction: term.direction };
  });
  if (!refs.some((r) => r.ref.field === 'name'))
    refs.push({
      ref: { source: { kind: 'main' }, field: 'name', kind: 'string', label: 'name' },
      direction: 'asc',
    });
  const keys: CursorKey[] = refs.map(({ ref, direction }) => {
    let item = items.findIndex(
      (i) => i.kind === 'column' && i.ref.source.kind === 'main' && i.ref.field === ref.field,
    );
    if (item < 0) {
      const key = `__cursor_${ref.field}`;
      item = items.push({ kind: 'column', ref, key }) - 1;
      parts.hiddenKeys.push(key);
    }
    return { ref, direction, item, nullable: keyNullable(ref) };
  });
  const shape = cursorShape(scope.binding.meta.name, keys);
  return raw === '' ? { keys, shape } : { keys, shape, after: parseCursor(raw, keys, shape) };
}
