// Parses `order_by` (`field [asc|desc]`, comma-separated; no direction is ascending) and `group_by` (`field`, comma-
// separated) through the same grammar as `fields`: names of the queried DocType or of selected aliases, nothing else.
import { DataError } from '../errors/errors';
import { mainColumn, resolveColumn, type ColumnRef, type QueryScope } from './columns';
import type { SelectItem } from './parse-fields';
import { tokenize, TokenStream } from './tokenize';

/** One ORDER BY term: a column, or a selected item by its position. */
export interface OrderTerm {
  ref?: ColumnRef;
  /** Index into the selected items when the term names one of their keys (an alias or an aggregate). */
  item?: number;
  direction: 'asc' | 'desc';
}

const MAX_TERMS = 20;

async function term(
  scope: QueryScope,
  s: TokenStream,
  items: SelectItem[],
  where: string,
): Promise<Omit<OrderTerm, 'direction'>> {
  const start = s.peek();
  const parts: string[] = [];
  const name = () => {
    const t = s.next();
    if (t?.kind !== 'word' && t?.kind !== 'quoted') throw s.error();
    return t.text;
  };
  parts.push(name());
  if (s.peek()?.kind === 'dot') {
    s.next();
    parts.push(name());
  }
  const label = parts.join('.');
  const item = items.findIndex((i) => i.key === label);
  if (item >= 0 && (items[item]?.kind === 'aggregate' || start?.kind === 'word')) return { item };
  return { ref: await resolveColumn(scope, parts, where, false) };
}

async function parseTerms(
  scope: QueryScope,
  raw: string,
  items: SelectItem[],
  where: string,
  directions: boolean,
): Promise<OrderTerm[]> {
  const s = new TokenStream(tokenize(raw, where), raw, where);
  const terms: OrderTerm[] = [];
  while (!s.done()) {
    if (terms.length >= MAX_TERMS) throw new DataError(`${where}: at most ${MAX_TERMS} terms`);
    const t = await term(scope, s, items, where);
    let direction: 'asc' | 'desc' = 'asc';
    if (directions && s.keyword('desc')) direction = 'desc';
    else if (directions) s.keyword('asc');
    terms.push({ ...t, direction });
    if (s.done()) break;
    s.expect('comma');
    if (s.done()) throw s.error();
  }
  return terms;
}

/** Parses `order_by`; undefined when none was given. */
export async function parseOrderBy(
  scope: QueryScope,
  raw: unknown,
  items: SelectItem[],
): Promise<OrderTerm[] | undefined> {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw new DataError("'order_by' must be a string");
  return parseTerms(scope, raw, items, 'order_by', true);
}

/** Parses `group_by` (columns of the queried DocType). */
export async function parseGroupBy(scope: QueryScope, raw: unknown): Promise<ColumnRef[]> {
  if (raw === undefined || raw === null || raw === '') return [];
  if (typeof raw !== 'string') throw new DataError("'group_by' must be a string");
  const terms = await parseTerms(scope, raw, [], 'group_by', false);
  return terms.map((t) => t.ref as ColumnRef);
}

/** The DocType's default order (`sort_field` / `sort_order`); `creation desc` when the reader may not sort by it. */
export function defaultOrder(scope: QueryScope): OrderTerm[] {
  const { meta } = scope.binding;
  const fallback: OrderTerm[] = [{ ref: mainColumn(scope, 'creation', 'order_by'), direction: 'desc' }];
  const field = meta.sortField.trim();
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) return fallback;
  try {
    return [{ ref: mainColumn(scope, field, 'order_by'), direction: meta.sortOrder }];
  } catch {
    return fallback;
  }
}
