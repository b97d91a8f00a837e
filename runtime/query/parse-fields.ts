// Parses `fields`: names, `*`, `field as alias`, `table_field.field`, `link_field.field`, aggregates in the string
// grammar (`count(name) as count`, `sum(qty)`) or Frappe's v2 dict form (`{"COUNT": "*", "as": "count"}`), and
// child-row selections (`{"parts": ["part_name", "qty"]}`). Anything else is a 400 naming the offending text.
import { DataError } from '../errors/errors';
import type { DocTypeBinding } from '../registry/registry';
import {
  childColumn,
  childTable,
  mainColumn,
  readableColumns,
  resolveColumn,
  type ColumnRef,
  type QueryScope,
} from './columns';
import { clip, tokenize, TokenStream } from './tokenize';

/** An aggregate function the grammar allows. */
export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** One selected value, returned under `key`. */
export type SelectItem =
  | { kind: 'column'; ref: ColumnRef; key: string }
  | { kind: 'aggregate'; fn: AggregateFn; distinct: boolean; ref?: ColumnRef; key: string };

/** Child rows of a Table field returned nested under each parent (one query per page). */
export interface ChildSelect {
  tableField: string;
  child: DocTypeBinding;
  fields: string[];
}

/** The parsed `fields` parameter. */
export interface FieldSelection {
  items: SelectItem[];
  children: ChildSelect[];
}

const AGGREGATES: readonly AggregateFn[] = ['count', 'sum', 'avg', 'min', 'max'];
const MAX_FIELDS = 500;
const WHERE = 'fields';

function isAggregate(name: string): name is AggregateFn {
  return (AGGREGATES as readonly string[]).includes(name);
}

/** Reads `name ['.' name]` from the stream. */
export function readReference(s: TokenStream): string[] {
  const name = () => {
    const t = s.next();
    if (t?.kind !== 'word' && t?.kind !== 'quoted') throw s.error();
    return t.text;
  };
  const parts = [name()];
  if (s.peek()?.kind === 'dot') {
    s.next();
    parts.push(name());
  }
  return parts;
}

async function aggregate(
  scope: QueryScope,
  fn: AggregateFn,
  arg: string[] | '*',
  distinct: boolean,
  alias: string | undefined,
): Promise<SelectItem> {
  if (arg === '*' && (fn !== 'count' || distinct))
    throw new DataError(`${WHERE}: ${fn}(*) is not allowed; name a field`);
  const ref = arg === '*' ? undefined : await resolveColumn(scope, arg, WHERE, true);
  if ((fn === 'sum' || fn === 'avg') && ref && !['integer', 'number', 'check'].includes(ref.kind)) {
    throw new DataError(`${WHERE}: ${fn} needs a number field, not ${ref.label}`);
  }
  const key = alias ?? `${fn}(${distinct ? 'distinct ' : ''}${ref?.label ?? '*'})`;
  return { kind: 'aggregate', fn, distinct, ...(ref ? { ref } : {}), key };
}

async function stringItem(scope: QueryScope, text: string): Promise<SelectItem[]> {
  const s = new TokenStream(tokenize(text, WHERE), text, WHERE);
  let item: SelectItem | '*';
  const first = s.peek();
  if (first?.kind === 'star') {
    s.next();
    item = '*';
  } else if (first?.kind === 'word' && s.peek(1)?.kind === 'lparen') {
    const fn = first.text.toLowerCase();
    if (!isAggregate(fn))
      throw new DataError(
        `${WHERE}: function ${clip(first.text)} is not allowed; use count, sum, avg, min or max`,
      );
    s.next();
    s.expect('lparen');
    const distinct = s.keyword('distinct');
    let arg: string[] | '*';
    if (s.peek()?.kind === 'star') {
      s.next();
      arg = '*';
    } else arg = readReference(s);
    s.expect('rparen');
    const alias = readAlias(s);
    if (!s.done()) throw s.error();
    return [await aggregate(scope, fn, arg, distinct, alias)];
  } else {
    const ref = await resolveColumn(scope, readReference(s), WHERE, true);
    item = { kind: 'column', ref, key: ref.label };
  }
  const alias = readAlias(s);
  if (!s.done()) throw s.error();
  if (item === '*') {
    if (alias) throw s.error();
    return defaultItems(scope);
  }
  return [alias ? { ...item, key: alias } : item];
}

function readAlias(s: TokenStream): string | undefined {
  if (!s.keyword('as')) return undefined;
  const t = s.next();
  if (t?.kind !== 'word') throw s.error();
  return t.text;
}

async function dictItem(
  scope: QueryScope,
  raw: Record<string, unknown>,
  children: ChildSelect[],
): Promise<SelectItem[]> {
  const keys = Object.keys(raw).filter((k) => k !== 'as');
  const alias = raw.as;
  if (alias !== undefined && (typeof alias !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias))) {
    throw new DataError(`${WHERE}: an alias must be a plain identifier; got ${clip(alias)}`);
  }
  if (keys.length !== 1)
    throw new DataError(`${WHERE}: a field object names one function or one table field; got ${clip(raw)}`);
  const key = keys[0] as string;
  const value = raw[key];
  const fn = key.toLowerCase();
  if (isAggregate(fn)) {
    if (typeof value !== 'string') throw new DataError(`${WHERE}: ${key} takes a field name or "*"`);
    const arg = value.trim() === '*' ? '*' : readWholeReference(value);
    return [await aggregate(scope, fn, arg, false, alias as string | undefined)];
  }
  const table = childTable(scope, key);
  if (!table || table.tableField !== key || alias !== undefined)
    throw new DataError(`${WHERE}: ${clip(key)} is not an allowed function or table field`);
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_FIELDS)
    throw new DataError(`${WHERE}: ${key} takes a list of field names`);
  const names: string[] = [];
  for (const name of value) {
    if (name === '*')
      names.push(
        ...readableColumns(table.child, scope.access).filter(
          (f) => f !== 'parent' && f !== 'parenttype' && f !== 'parentfield',
        ),
      );
    else if (typeof name === 'string') names.push(childColumn(scope, table, name, WHERE).field);
    else throw new DataError(`${WHERE}: ${key} takes a list of field names`);
  }
  children.push({ ...table, fields: [...new Set(names)] });
  return [];
}

function readWholeReference(text: string): string[] {
  const s = new TokenStream(tokenize(text, WHERE), text, WHERE);
  const parts = readReference(s);
  if (!s.done()) throw s.error();
  return parts;
}

/** Every readable column of the queried DocType (the default and `*`). */
export function defaultItems(scope: QueryScope): SelectItem[] {
  return readableColumns(scope.binding, scope.access).map((f) => {
    const ref = mainColumn(scope, f, WHERE);
    return { kind: 'column', ref, key: f };
  });
}

/** Parses the `fields` parameter (a list, or one string of comma-separated items). */
export async function parseFields(scope: QueryScope, raw: unknown): Promise<FieldSelection> {
  if (raw === undefined || raw === null || raw === '') return { items: defaultItems(scope), children: [] };
  const list = typeof raw === 'string' ? raw.split(',') : raw;
  if (!Array.isArray(list)) throw new DataError("'fields' must be a list");
  if (list.length > MAX_FIELDS) throw new DataError(`'fields' may name at most ${MAX_FIELDS} fields`);
  const items: SelectItem[] = [];
  const children: ChildSelect[] = [];
  const byKey = new Map<string, string>();
  for (const entry of list) {
    let parsed: SelectItem[];
    if (typeof entry === 'string') parsed = await stringItem(scope, entry.trim());
    else if (entry && typeof entry === 'object' && !Array.isArray(entry))
      parsed = await dictItem(scope, entry as Record<string, unknown>, children);
    else throw new DataError(`${WHERE}: each field must be a string or an object; got ${clip(entry)}`);
    for (const item of parsed) {
      const identity =
        item.kind === 'column'
          ? `c:${item.ref.label}`
          : `a:${item.fn}:${item.distinct}:${item.ref?.label ?? '*'}`;
      const seen = byKey.get(item.key);
      if (seen === identity) continue;
      if (seen !== undefined)
        throw new DataError(`${WHERE}: two fields are returned as ${clip(item.key)}; give one an alias`);
      byKey.set(item.key, identity);
      items.push(item);
    }
  }
  return { items, children };
}
