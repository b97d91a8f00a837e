// Parses `filters` / `or_filters` (v1 lists of conditions, dicts, v2 nested AND/OR groups) into the filter tree, each
// field checked against the DocType's metadata and the reader's access, each value coerced to its column.
import { DataError } from '../errors/errors';
import { childColumn, childTable, mainColumn, type ColumnRef, type QueryScope } from './columns';
import { and, cond, or, type FilterNode } from './filter-tree';
import { MAX_IN_VALUES, normalizeCondition, parseOperator } from './filter-values';
import { clip } from './tokenize';

const MAX_DEPTH = 8;
const MAX_CONDITIONS = 500;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface ParseState {
  scope: QueryScope;
  where: string;
  conditions: number;
  /** Values bound so far: every database caps a statement's parameters (SQLite at 32,766). */
  values: number;
}

function column(state: ParseState, doctype: unknown, field: unknown): ColumnRef {
  const { scope, where } = state;
  if (typeof field !== 'string')
    throw new DataError(`${where}: field names must be strings; got ${clip(field)}`);
  const parts = field.split('.');
  if (!parts.every((p) => FIELD.test(p)) || parts.length > 2)
    throw new DataError(`${where}: Field not permitted in query: ${clip(field)}`);
  if (doctype !== undefined && doctype !== scope.binding.meta.name) {
    if (typeof doctype !== 'string')
      throw new DataError(`${where}: the DocType of a condition must be a string`);
    const table = childTable(scope, doctype);
    if (!table || parts.length > 1)
      throw new DataError(
        `${where}: conditions on ${clip(doctype)} are not supported on ${scope.binding.meta.name}`,
      );
    return childColumn(scope, table, field, where);
  }
  if (parts.length === 1) return mainColumn(scope, field, where);
  const table = childTable(scope, parts[0] as string);
  if (!table) throw new DataError(`${where}: Field not permitted in query: ${clip(field)}`);
  return childColumn(scope, table, parts[1] as string, where);
}

function condition(
  state: ParseState,
  doctype: unknown,
  field: unknown,
  op: unknown,
  value: unknown,
): FilterNode {
  if (++state.conditions > MAX_CONDITIONS)
    throw new DataError(`${state.where}: at most ${MAX_CONDITIONS} conditions`);
  const ref = column(state, doctype, field);
  const normalized = normalizeCondition(ref.kind, parseOperator(op), value, ref.label);
  state.values += Array.isArray(normalized.value) ? normalized.value.length : 1;
  if (state.values > MAX_IN_VALUES)
    throw new DataError(`${state.where}: at most ${MAX_IN_VALUES} values in all its conditions`);
  return cond(
    ref.field,
    normalized.op,
    normalized.value,
    ref.source.kind === 'child' ? ref.source.tableField : undefined,
  );
}

/** `[cond, "and"|"or", cond, ...]`: a nested group in Frappe's v2 syntax. */
function isNestedGroup(list: unknown[]): boolean {
  return (
    list.length >= 3 &&
    list.every((item, i) => (i % 2 === 1 ? item === 'and' || item === 'or' : Array.isArray(item)))
  );
}

function item(state: ParseState, raw: unknown, depth: number): FilterNode {
  if (!Array.isArray(raw))
    throw new DataError(`${state.where}: each condition must be a list; got ${clip(raw)}`);
  if (raw.length > 0 && Array.isArray(raw[0])) return list(state, raw, depth + 1);
  switch (raw.length) {
    case 2:
      return condition(state, undefined, raw[0], '=', raw[1]);
    case 3:
      return condition(state, undefined, raw[0], raw[1], raw[2]);
    case 4:
      return condition(state, raw[0], raw[1], raw[2], raw[3]);
    default:
      throw new DataError(`${state.where}: a condition has 2, 3 or 4 elements; got ${clip(raw)}`);
  }
}

function list(state: ParseState, raw: unknown[], depth: number): FilterNode {
  if (depth > MAX_DEPTH) throw new DataError(`${state.where}: groups nest at most ${MAX_DEPTH} deep`);
  if (isNestedGroup(raw)) {
    const connectives = new Set(raw.filter((_, i) => i % 2 === 1));
    if (connectives.size > 1)
      throw new DataError(`${state.where}: Error parsing nested filters: mix of "and" and "or" in one group`);
    const children = raw.filter((_, i) => i % 2 === 0).map((c) => item(state, c, depth));
    return connectives.has('or') ? or(...children) : and(...children);
  }
  return and(...raw.map((c) => item(state, c, depth)));
}

function dict(state: ParseState, raw: Record<string, unknown>): FilterNode {
  return and(
    ...Object.keys(raw).map((field) => {
      const value = raw[field];
      if (Array.isArray(value)) {
        if (value.length !== 2)
          throw new DataError(`${state.where}: ${clip(field)} takes a value or [operator, value]`);
        return condition(state, undefined, field, value[0], value[1]);
      }
      return condition(state, undefined, field, '=', value);
    }),
  );
}

/**
 * Parses a filters parameter: a dict (`{field: value}` / `{field: [op, value]}`), a list of `[field, value]`,
 * `[field, op, value]`, `[DocType, field, op, value]` (the DocType may be a child table), or nested groups
 * `[cond, "or", cond]`. With `combine` 'or' the top-level conditions are ORed (`or_filters`).
 */
export function parseFilters(
  scope: QueryScope,
  raw: unknown,
  where: string,
  combine: 'and' | 'or' = 'and',
): FilterNode {
  if (raw === undefined || raw === null || raw === '') return and();
  const state: ParseState = { scope, where, conditions: 0, values: 0 };
  let node: FilterNode;
  if (Array.isArray(raw)) node = list(state, raw, 0);
  else if (typeof raw === 'object') node = dict(state, raw as Record<string, unknown>);
  else throw new DataError(`'${where}' must be a list or dictionary`);
  if (combine === 'or' && node.kind === 'and') return node.children.length ? or(...node.children) : and();
  return node;
}
