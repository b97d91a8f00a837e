// The list query: fields, filters, order_by and paging parsed against DocType metadata, then built with bound values.
import type { Knex } from 'knex';
import { DataError, PermissionError } from '../errors/errors';
import { isTableType } from '../meta/field-types';
import { STANDARD_FIELDS, type DocTypeMeta } from '../meta/types';
import type { DocTypeBinding } from '../registry/registry';

/** A comparison the list query supports. */
export type Operator = '=' | '!=' | '>' | '<' | '>=' | '<=' | 'like' | 'not like' | 'in' | 'not in' | 'is';

/** One parsed filter condition. */
export interface Condition {
  field: string;
  op: Operator;
  value: unknown;
}

/** A parsed list request. */
export interface ListQuery {
  fields: string[];
  conditions: Condition[];
  order: { field: string; direction: 'asc' | 'desc' }[];
  limit: number;
  start: number;
}

const OPERATORS: readonly Operator[] = ['=', '!=', '>', '<', '>=', '<=', 'like', 'not like', 'in', 'not in', 'is'];
const STANDARD: readonly string[] = STANDARD_FIELDS;

/** Resolves a field name against the DocType: standard or stored field; Password and Table fields refused. */
export function checkField(meta: DocTypeMeta, name: unknown, where: string): string {
  if (typeof name !== 'string') throw new DataError(`${where}: field names must be strings`);
  if (STANDARD.includes(name)) return name;
  const field = meta.fields.find((f) => f.fieldname === name);
  if (!field || isTableType(field.fieldtype)) throw new DataError(`${where}: Field not permitted in query: ${name.slice(0, 140)}`);
  if (field.fieldtype === 'Password') throw new PermissionError(`${where}: Field not permitted in query: ${name}`);
  return name;
}

/** Every readable column of the DocType (the default `fields`). */
export function defaultFields(meta: DocTypeMeta): string[] {
  return [...STANDARD, ...meta.fields.filter((f) => !isTableType(f.fieldtype) && f.fieldtype !== 'Password').map((f) => f.fieldname)];
}

/** Parses `fields` (a list of names, or `*`). */
export function parseFields(meta: DocTypeMeta, raw: unknown): string[] {
  if (raw === undefined || raw === null || raw === '') return defaultFields(meta);
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list)) throw new DataError("'fields' must be a list");
  if (list.length > 500) throw new DataError("'fields' may name at most 500 fields");
  if (list.includes('*')) return defaultFields(meta);
  return [...new Set(list.map((f) => checkField(meta, f, 'fields')))];
}

function parseOperator(raw: unknown): Operator {
  const op = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (!(OPERATORS as readonly string[]).includes(op)) throw new DataError(`Operator must be one of ${OPERATORS.join(', ')}`);
  return op as Operator;
}

function scalar(value: unknown, where: string): unknown {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return typeof value === 'boolean' ? Number(value) : value;
  throw new DataError(`${where}: filter values must be text, numbers or booleans`);
}

function condition(meta: DocTypeMeta, field: unknown, op: Operator, value: unknown): Condition {
  const name = checkField(meta, field, 'filters');
  if (op === 'in' || op === 'not in') {
    const list = typeof value === 'string' ? value.split(',').map((v) => v.trim()) : value === null ? [] : value;
    if (!Array.isArray(list)) throw new DataError(`filters: ${op} needs a list`);
    if (list.length > 10_000) throw new DataError(`filters: ${op} takes at most 10000 values`);
    return { field: name, op, value: list.map((v) => scalar(v, 'filters')) };
  }
  if (op === 'is' && value !== 'set' && value !== 'not set') throw new DataError("filters: 'is' takes 'set' or 'not set'");
  return { field: name, op, value: scalar(value, 'filters') };
}

/** Parses `filters`: a dict (`{field: value}` or `{field: [op, value]}`) or a list of `[field, value]`, `[field, op, value]`, `[doctype, field, op, value]`. */
export function parseFilters(meta: DocTypeMeta, raw: unknown): Condition[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (Array.isArray(raw)) {
    return raw.map((item) => {
      if (!Array.isArray(item)) throw new DataError('filters: each condition must be a list');
      if (item.length === 2) return condition(meta, item[0], '=', item[1]);
      if (item.length === 3) return condition(meta, item[0], parseOperator(item[1]), item[2]);
      if (item.length === 4) {
        if (item[0] !== meta.name) throw new DataError(`filters: conditions on ${String(item[0]).slice(0, 140)} are not supported here`);
        return condition(meta, item[1], parseOperator(item[2]), item[3]);
      }
      throw new DataError('filters: a condition has 2, 3 or 4 elements');
    });
  }
  if (typeof raw === 'object') {
    return Object.entries(raw as Record<string, unknown>).map(([field, value]) =>
      Array.isArray(value) ? condition(meta, field, parseOperator(value[0]), value[1]) : condition(meta, field, '=', value),
    );
  }
  throw new DataError("'filters' must be a list or dictionary");
}

/** Parses `order_by`: comma-separated `field [asc|desc]`; no direction is ascending. */
export function parseOrderBy(meta: DocTypeMeta, raw: unknown): ListQuery['order'] {
  if (raw === undefined || raw === null || raw === '') return [{ field: meta.sortField === 'name' || STANDARD.includes(meta.sortField) || meta.fields.some((f) => f.fieldname === meta.sortField) ? meta.sortField : 'creation', direction: meta.sortOrder }];
  if (typeof raw !== 'string') throw new DataError("'order_by' must be a string");
  return raw.split(',').map((part) => {
    const m = /^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?(?:\s+(asc|desc))?\s*$/i.exec(part);
    if (!m) throw new DataError(`Invalid field format in Order By: ${part.slice(0, 140)}`);
    return { field: checkField(meta, m[1], 'order_by'), direction: (m[2]?.toLowerCase() ?? 'asc') as 'asc' | 'desc' };
  });
}

/** Applies parsed conditions to a knex query with bound values (Frappe's NULL rules for != and = ''). */
export function applyConditions(query: Knex.QueryBuilder, conditions: Condition[]): Knex.QueryBuilder {
  for (const { field, op, value } of conditions) {
    switch (op) {
      case '=':
        if (value === '' || value === null) query.where((q) => q.whereNull(field).orWhere(field, ''));
        else query.where(field, value as Knex.Value);
        break;
      case '!=':
        if (value === '' || value === null) query.whereNotNull(field).whereNot(field, '');
        else query.where((q) => q.whereNull(field).orWhereNot(field, value as Knex.Value));
        break;
      case 'in':
        if ((value as unknown[]).length === 0) query.whereRaw('1 = 0');
        else query.whereIn(field, value as Knex.Value[]);
        break;
      case 'not in':
        if ((value as unknown[]).length) query.where((q) => q.whereNull(field).orWhereNotIn(field, value as Knex.Value[]));
        break;
      case 'is':
        if (value === 'set') query.whereNotNull(field).whereNot(field, '');
        else query.where((q) => q.whereNull(field).orWhere(field, ''));
        break;
      case 'like':
        query.where(field, 'like', value as string);
        break;
      case 'not like':
        query.where((q) => q.whereNull(field).orWhere(field, 'not like', value as string));
        break;
      default:
        query.where(field, op, value as Knex.Value);
    }
  }
  return query;
}

/** Builds the SELECT of a list. */
export function buildListQuery(knex: Knex, binding: DocTypeBinding, list: ListQuery): Knex.QueryBuilder {
  const query = knex(binding.meta.tableName).select(list.fields);
  applyConditions(query, list.conditions);
  for (const { field, direction } of list.order) query.orderBy(field, direction);
  if (list.limit > 0) query.limit(list.limit);
  if (list.start > 0) query.offset(list.start);
  return query;
}

/** Builds the COUNT of a list's filters. */
export function buildCountQuery(knex: Knex, binding: DocTypeBinding, conditions: Condition[]): Knex.QueryBuilder {
  return applyConditions(knex(binding.meta.tableName).count({ count: '*' }), conditions);
}
