// Builds the SELECT and COUNT of a list plan with knex: generated aliases (`f0`, `f1`, ...) for every selected value,
// left joins for child-table and Link-target columns, the filter tree and the reader's restriction as WHERE.
import type { Knex } from 'knex';
import { formatDatetime, decodeValue } from '../db/stored-values';
import type { ColumnRef, QueryScope } from './columns';
import { applyFilterTree } from './build-where';
import { applyCursor, type CursorPlan } from './cursor';
import { and, type FilterNode } from './filter-tree';
import type { FieldSelection } from './parse-fields';
import type { OrderTerm } from './parse-order';
import type { RowSet } from '../db/compiled-query';

/** A list request parsed and checked, ready to build. */
export interface ListPlan {
  scope: QueryScope;
  selection: FieldSelection;
  /** The user's filters (and or_filters) as one tree. */
  filters: FilterNode;
  groupBy: ColumnRef[];
  order: OrderTerm[];
  /** Rows to fetch; undefined: no LIMIT. */
  limit?: number;
  offset: number;
  /** v2 `cursor` paging: ordered by its keys (the order plus `name`), starting after its values when it has some. */
  keyset?: CursorPlan;
}

const alias = (i: number) => `f${i}`;

function joinAlias(ref: ColumnRef): string | undefined {
  if (ref.source.kind === 'child') return `c_${ref.source.tableField}`;
  if (ref.source.kind === 'link') return `l_${ref.source.linkField}`;
  return undefined;
}

/** The qualified column a reference reads. */
export function columnExpression(scope: QueryScope, ref: ColumnRef): string {
  return `${joinAlias(ref) ?? scope.binding.meta.tableName}.${ref.field}`;
}

function whereTree(plan: { scope: QueryScope; filters: FilterNode }): FilterNode {
  const { restriction } = plan.scope.access;
  return restriction ? and(plan.filters, restriction) : plan.filters;
}

function addJoins(knex: Knex, q: Knex.QueryBuilder, plan: ListPlan): void {
  const { scope } = plan;
  const main = scope.binding.meta.tableName;
  const refs = plan.selection.items.flatMap((i) => (i.ref ? [i.ref] : []));
  const done = new Set<string>();
  for (const ref of refs) {
    const name = joinAlias(ref);
    if (!name || done.has(name)) continue;
    done.add(name);
    const source = ref.source;
    if (source.kind === 'child') {
      q.leftJoin(`${source.child.meta.tableName} as ${name}`, (j) => {
        j.on(`${name}.parent`, '=', `${main}.name`)
          .andOnVal(`${name}.parenttype`, '=', scope.binding.meta.name)
          .andOnVal(`${name}.parentfield`, '=', source.tableField);
      });
    } else if (source.kind === 'link') {
      const target = source.target.meta.tableName;
      if (source.access.restriction) {
        // Rows of the target the reader may not see join as NULL.
        const sub = knex(target).select(`${target}.*`);
        applyFilterTree(sub, source.access.restriction, {
          knex,
          registry: scope.site.registry,
          binding: source.target,
          qualifier: target,
        });
        q.leftJoin(sub.as(name), `${name}.name`, `${main}.${source.linkField}`);
      } else {
        q.leftJoin(`${target} as ${name}`, `${name}.name`, `${main}.${source.linkField}`);
      }
    }
  }
}

/**
 * The result columns of a list plan's packed SELECT, in order, or undefined when it cannot be packed (aggregates: an
 * ORDER BY may name their aliases). A packed SELECT answers one JSON array of the values per row, which SQLite's
 * `json_array` builds and JSON.parse reads several times faster than better-sqlite3 hands over separate values.
 */
export function packedColumns(plan: ListPlan): string[] | undefined {
  return plan.selection.items.every((item) => item.kind === 'column')
    ? plan.selection.items.map((_, i) => alias(i))
    : undefined;
}

/** Builds the SELECT of a list plan; `packed` (SQLite, plans with `packedColumns` only): one `json_array` per row. */
export function buildListQuery(knex: Knex, plan: ListPlan, packed = false): Knex.QueryBuilder {
  const { scope } = plan;
  const main = scope.binding.meta.tableName;
  const q = knex(main);
  addJoins(knex, q, plan);
  if (packed) {
    const columns = plan.selection.items.map((item) => columnExpression(scope, item.ref as ColumnRef));
    q.select(knex.raw(`json_array(${columns.map(() => '??').join(', ')}) as ??`, [...columns, 'row']));
  } else {
    plan.selection.items.forEach((item, i) => {
      const column = item.ref ? columnExpression(scope, item.ref) : '*';
      if (item.kind === 'column') q.select({ [alias(i)]: column });
      else if (item.fn === 'count') q[item.distinct ? 'countDistinct' : 'count']({ [alias(i)]: column });
      else if (item.fn === 'avg') {
        // MariaDB rounds AVG to 4 decimals (div_precision_increment): sum and count, divided in JS, agree on both databases.
        q[item.distinct ? 'sumDistinct' : 'sum']({ [`${alias(i)}_sum`]: column });
        q[item.distinct ? 'countDistinct' : 'count']({ [`${alias(i)}_count`]: column });
      } else if (item.distinct && item.fn === 'sum') q.sumDistinct({ [alias(i)]: column });
      else q[item.fn]({ [alias(i)]: column });
    });
  }
  applyFilterTree(q, whereTree(plan), {
    knex,
    registry: scope.site.registry,
    binding: scope.binding,
    qualifier: main,
  });
  if (plan.groupBy.length) q.groupBy(plan.groupBy.map((ref) => columnExpression(scope, ref)));
  const { keyset } = plan;
  if (keyset) {
    const column = (ref: ColumnRef) => columnExpression(scope, ref);
    if (keyset.after) applyCursor(q, keyset.keys, keyset.after, column);
    for (const key of keyset.keys) q.orderBy(column(key.ref), key.direction);
  } else
    for (const term of plan.order) {
      // A selected plain column sorts by its column (an index can serve it); aggregates and aliases by their alias.
      const item = term.item === undefined ? undefined : plan.selection.items[term.item];
      const ref = item?.kind === 'column' ? item.ref : term.ref;
      q.orderBy(ref ? columnExpression(scope, ref) : alias(term.item as number), term.direction);
    }
  if (plan.limit !== undefined) q.limit(plan.limit);
  if (plan.offset > 0) q.offset(plan.offset);
  return q;
}

/** Builds the COUNT of the rows a plan's filters match (no joins: child filters never repeat rows). */
export function buildCountQuery(
  knex: Knex,
  plan: { scope: QueryScope; filters: FilterNode },
): Knex.QueryBuilder {
  const main = plan.scope.binding.meta.tableName;
  const q = knex(main).count({ count: '*' });
  applyFilterTree(q, whereTree(plan), {
    knex,
    registry: plan.scope.site.registry,
    binding: plan.scope.binding,
    qualifier: main,
  });
  return q;
}

type Decoder = (value: unknown) => unknown;

const asNumber: Decoder = (v) =>
  v === null || v === undefined ? null : typeof v === 'number' ? v : Number(v);
const asIs: Decoder = (v) => (v === undefined ? null : v);
/** Frappe's datetime text; a stored `YYYY-MM-DD HH:MM:SS.ffffff` with a non-zero fraction is already in that form. */
const asDatetime: Decoder = (v) => {
  if (v === null || v === undefined) return null;
  const text = String(v);
  return text.length === 26 && text[10] === ' ' && text[19] === '.' && !text.endsWith('000000')
    ? text
    : formatDatetime(text);
};

/** The decoder of one column's values (chosen once per page, not per value). */
function columnDecoder(ref: ColumnRef): Decoder {
  const { meta } = ref;
  if (ref.kind === 'string') return asIs;
  if (ref.kind === 'integer' || ref.kind === 'number' || ref.kind === 'check') return asNumber;
  if (ref.kind === 'datetime') return asDatetime;
  return meta ? (v) => (v === null || v === undefined ? null : decodeValue(meta, v)) : asIs;
}

type RowDecoder = (row: unknown[]) => unknown;

/** A number at the 9 decimal places of a decimal column (null stays null). */
function toScale(n: number | null): number | null {
  return n === null || !Number.isFinite(n) ? n : Number(n.toFixed(9));
}

function itemDecoder(plan: ListPlan, i: number, column: (name: string) => number): RowDecoder {
  const item = plan.selection.items[i] as ListPlan['selection']['items'][number];
  const at = column(alias(i));
  if (item.kind === 'column') {
    const decode = columnDecoder(item.ref);
    return (row) => decode(row[at]);
  }
  // Sums and averages of decimal fields (Float, Currency, Percent) at their column's 9 places: SQLite adds REALs
  // (0.1 + 0.2 = 0.30000000000000004) and the average is a division in JS, so each database would differ in the last
  // digits otherwise.
  const places = item.ref?.kind === 'number' ? toScale : (n: number | null) => n;
  if (item.fn === 'avg') {
    const [sum, count] = [column(`${alias(i)}_sum`), column(`${alias(i)}_count`)];
    return (row) => places(Number(row[count]) ? Number(row[sum]) / Number(row[count]) : null);
  }
  if (item.fn === 'sum') return (row) => places(asNumber(row[at]) as number | null);
  if (item.fn === 'count') return (row) => asNumber(row[at]);
  const decode = item.ref ? columnDecoder(item.ref) : asIs;
  return (row) => decode(row[at]);
}

/** Turns result rows into objects keyed as the user asked, values decoded per field type. */
export type PageDecoder = (result: RowSet) => Record<string, unknown>[];

/**
 * The decoder of a plan's result rows whose columns (aliased `f0`, `f1`, ...) are `columns`: made once, used per page.
 * Rows run-query remembers are decoded once, and each page gets copies of those objects (spreading an object is many
 * times cheaper than building it key by key). Only JSON fields decode to objects, which copies would share: such plans
 * decode every page.
 */
export function pageDecoder(plan: ListPlan, columns: string[]): PageDecoder {
  const index = new Map(columns.map((c, i) => [c, i]));
  const column = (name: string) => index.get(name) ?? -1;
  const keys = plan.selection.items.map((item) => item.key);
  const decoders = keys.map((_, i) => itemDecoder(plan, i, column));
  const decode = (rows: unknown[][]) =>
    rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) out[keys[i] as string] = (decoders[i] as RowDecoder)(row);
      return out;
    });
  const copies = !plan.selection.items.some((item) => item.ref?.kind === 'json');
  const self = {};
  return ({ rows, derived }) => {
    if (!derived || !copies) return decode(rows);
    let page = derived.get(self) as Record<string, unknown>[] | undefined;
    if (!page) derived.set(self, (page = decode(rows)));
    return page.map((row) => ({ ...row }));
  };
}
