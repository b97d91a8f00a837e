// Turns a filter tree into knex WHERE clauses with bound values. A NULL compares as Frappe's fallback value ('' for
// text, 0 for numbers): `!= 'A'` includes NULL, `= ''` matches NULL. Child-table conditions become one
// `name IN (SELECT parent ...)` per table and AND group, so parent rows never repeat.
import type { Knex } from 'knex';
import { DataError } from '../errors/errors';
import { isTableType } from '../meta/field-types';
import type { DocTypeBinding, Registry } from '../registry/registry';
import { isStandardColumn } from '../meta/types';
import { NEVER_NULL, fieldKind, standardKind, type ColumnKind } from './columns';
import type { FilterCondition, FilterNode, ParentCondition } from './filter-tree';
import { normalizeCondition, nullFallback, type NormalizedCondition } from './filter-values';
import { clip } from './tokenize';

/** The DocType a filter tree is about and how its columns are addressed in the query. */
export interface WhereTarget {
  knex: Knex;
  registry: Registry;
  binding: DocTypeBinding;
  /** The table name or alias that qualifies the DocType's columns. */
  qualifier: string;
}

/** The value kind of a column of `binding`; 400 when it is not a column. */
export function columnKind(binding: DocTypeBinding, fieldname: string): ColumnKind {
  if (isStandardColumn(binding.meta, fieldname)) return standardKind(fieldname);
  const field = binding.fieldMap.get(fieldname);
  if (!field || isTableType(field.fieldtype))
    throw new DataError(`filters: Field not permitted in query: ${clip(fieldname)}`);
  return fieldKind(field);
}

/** SQL LIKE (`%`, `_`, backslash escapes; case-insensitive as both databases' default collations) evaluated in JS. */
export function likeMatches(text: string, pattern: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\' && i + 1 < pattern.length)
      source += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') source += '.*';
    else if (ch === '_') source += '.';
    else source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'is').test(text);
}

function compare(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [String(a), String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** True when a NULL (standing for `fallback`) satisfies the condition. */
export function nullSatisfies(c: NormalizedCondition, fallback: string | number): boolean {
  switch (c.op) {
    case '=':
      return compare(fallback, c.value) === 0;
    case '!=':
      return compare(fallback, c.value) !== 0;
    case '>':
      return compare(fallback, c.value) > 0;
    case '<':
      return compare(fallback, c.value) < 0;
    case '>=':
      return compare(fallback, c.value) >= 0;
    case '<=':
      return compare(fallback, c.value) <= 0;
    case 'like':
      return likeMatches(String(fallback), c.value as string);
    case 'not like':
      return !likeMatches(String(fallback), c.value as string);
    case 'in':
      return c.value.some((v) => compare(fallback, v) === 0);
    case 'not in':
      return !c.value.some((v) => compare(fallback, v) === 0);
    case 'between':
      return compare(fallback, c.value[0]) >= 0 && compare(fallback, c.value[1]) <= 0;
    case 'is':
      return c.value === 'not set';
    default:
      return false;
  }
}

function applyCondition(q: Knex.QueryBuilder, target: WhereTarget, node: FilterCondition): void {
  const kind = columnKind(target.binding, node.field);
  const c = normalizeCondition(kind, node.op, node.value, node.field);
  const col = `${target.qualifier}.${node.field}`;
  // Only text columns can hold '' (a date, time or number column cannot: PostgreSQL refuses the comparison).
  const text = kind === 'string' || kind === 'json';
  if (c.op === 'is') {
    if (c.value === 'set')
      q.where((b) => (text ? b.whereNotNull(col).andWhere(col, '<>', '') : b.whereNotNull(col)));
    else q.where((b) => (text ? b.whereNull(col).orWhere(col, '') : b.whereNull(col)));
    return;
  }
  if (c.op === 'in' && c.value.length === 0) {
    q.whereRaw('1 = 0');
    return;
  }
  if (c.op === 'not in' && c.value.length === 0) return; // only inside a child-table subquery: top-level ones are folded
  const base = (b: Knex.QueryBuilder) => {
    switch (c.op) {
      case 'in':
        return b.whereIn(col, c.value);
      case 'not in':
        return b.whereNotIn(col, c.value);
      case 'between':
        return b.whereBetween(col, c.value);
      case 'like':
        return b.whereRaw('?? like ? escape ?', [col, c.value, '\\']);
      case 'not like':
        return b.whereRaw('?? not like ? escape ?', [col, c.value, '\\']);
      case '!=':
        return b.where(col, '<>', c.value);
      default:
        return b.where(col, c.op, c.value);
    }
  };
  if (!NEVER_NULL.has(node.field) && nullSatisfies(c, nullFallback(kind)))
    q.where((b) => b.whereNull(col).orWhere((inner) => base(inner)));
  else q.where((b) => base(b));
}

function applyChildConditions(
  q: Knex.QueryBuilder,
  target: WhereTarget,
  table: string,
  conditions: FilterCondition[],
): void {
  const field = target.binding.fieldMap.get(table);
  const child =
    field && isTableType(field.fieldtype) && field.options ? target.registry.get(field.options) : undefined;
  if (!child)
    throw new DataError(`filters: ${clip(table)} is not a table field of ${target.binding.meta.name}`);
  const qualifier = child.meta.tableName;
  const sub = target
    .knex(qualifier)
    .select(`${qualifier}.parent`)
    .where(`${qualifier}.parenttype`, target.binding.meta.name)
    .andWhere(`${qualifier}.parentfield`, table);
  const childTarget: WhereTarget = { ...target, binding: child, qualifier };
  for (const c of conditions) applyCondition(sub, childTarget, { ...c, table: undefined });
  q.whereIn(`${target.qualifier}.name`, sub);
}

function applyParentCondition(q: Knex.QueryBuilder, target: WhereTarget, node: ParentCondition): void {
  const parent = target.registry.get(node.doctype);
  if (!parent || !target.binding.meta.istable)
    throw new Error(`${node.doctype} is not a parent DocType of ${target.binding.meta.name}`);
  const qualifier = parent.meta.tableName;
  const sub = target.knex(qualifier).select(`${qualifier}.name`);
  applyFilterTree(sub, node.restriction, { ...target, binding: parent, qualifier });
  q.whereIn(`${target.qualifier}.parent`, sub);
}

/**
 * The constant truth of a node when it has one (`in []` is false, `not in []` true, groups folded), so an OR never
 * loses a true member to an empty clause; undefined when the rows decide.
 */
function constant(node: FilterNode, target: WhereTarget): boolean | undefined {
  if (node.kind === 'parent') return undefined;
  if (node.kind === 'condition') {
    if (node.table !== undefined || (node.op !== 'in' && node.op !== 'not in')) return undefined;
    const c = normalizeCondition(columnKind(target.binding, node.field), node.op, node.value, node.field);
    return (c.value as unknown[]).length === 0 ? c.op === 'not in' : undefined;
  }
  const values = node.children.map((c) => constant(c, target));
  if (node.kind === 'and')
    return values.includes(false) ? false : values.every((v) => v === true) ? true : undefined;
  return values.includes(true) ? true : values.every((v) => v === false) ? false : undefined;
}

function applyNode(q: Knex.QueryBuilder, node: FilterNode, target: WhereTarget): void {
  if (node.kind === 'parent') {
    applyParentCondition(q, target, node);
    return;
  }
  if (node.kind === 'condition') {
    if (node.table !== undefined) applyChildConditions(q, target, node.table, [node]);
    else applyCondition(q, target, node);
    return;
  }
  // Members with a constant truth were folded by `constant`: an AND skips true ones, an OR false ones.
  const members = node.children.filter((c) => constant(c, target) !== (node.kind === 'and'));
  if (node.kind === 'or') {
    q.where((b) => {
      for (const child of members) b.orWhere((inner) => applyNode(inner, child, target));
    });
    return;
  }
  const byTable = new Map<string, FilterCondition[]>();
  for (const child of members) {
    if (child.kind === 'condition' && child.table !== undefined)
      byTable.set(child.table, [...(byTable.get(child.table) ?? []), child]);
    else q.where((inner) => applyNode(inner, child, target));
  }
  for (const [table, conditions] of byTable) applyChildConditions(q, target, table, conditions);
}

/** Adds the filter tree to `q` (ANDed with whatever `q` already has). */
export function applyFilterTree(q: Knex.QueryBuilder, node: FilterNode, target: WhereTarget): void {
  const truth = constant(node, target);
  if (truth === false) q.whereRaw('1 = 0');
  else if (truth === undefined) applyNode(q, node, target);
}
