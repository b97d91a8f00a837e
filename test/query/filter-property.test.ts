// Property: for random valid filter trees over Query Order (every operator, nested AND/OR groups, or_filters, NULLs,
// child-table conditions that hold for one child row together),
// the engine returns exactly the rows an in-memory evaluation of the same filters selects, on SQLite and MariaDB.
import fc from 'fast-check';
import { countDocuments, listDocuments } from '../../runtime/operations/list-operations';
import type { Caller } from '../../runtime/document/caller';
import { seededSite, type Seeded } from './query-site';

type Kind = 'text' | 'number' | 'date';
type Value = string | number | null;
interface FieldSpec {
  kind: Kind;
  ops: string[];
  values: Value[];
}

const WORDS = ['alpha', 'beta', 'gamma', 'bc', 'b%c', 'x', 'ab'];
const FIELDS: Record<string, FieldSpec> = {
  title: {
    kind: 'text',
    ops: ['=', '!=', '<', '>', 'like', 'not like', 'in', 'not in', 'is'],
    values: WORDS,
  },
  status: { kind: 'text', ops: ['=', '!=', 'in', 'not in'], values: ['Open', 'Closed', 'Cancelled'] },
  note: {
    kind: 'text',
    ops: ['=', '!=', 'like', 'not like', 'in', 'not in', 'is', '>='],
    values: ['', ...WORDS],
  },
  customer: {
    kind: 'text',
    ops: ['=', '!=', 'in', 'not in', 'is'],
    values: ['Acme', 'Globex', 'Initech', ''],
  },
  amount: {
    kind: 'number',
    ops: ['=', '!=', '>', '<', '>=', '<=', 'between', 'in', 'not in'],
    values: [0, 10, 75, 100, 250.5, 500],
  },
  qty: {
    kind: 'number',
    ops: ['=', '!=', '>', '<', '>=', '<=', 'between', 'in'],
    values: [-3, 0, 1, 2, 5, 10],
  },
  urgent: { kind: 'number', ops: ['=', '!='], values: [0, 1] },
  order_date: {
    kind: 'date',
    ops: ['=', '!=', '>', '<', '>=', '<=', 'between', 'is'],
    values: ['2024-01-01', '2024-02-15', '2024-03-01', '2024-06-30'],
  },
};
const LIKE_PATTERNS = ['%a%', 'a%', '%', '_eta', '%\\%%', 'b%c', '', 'B%'];
/** Fields of the child table (`lines.<field>` in filters): a parent matches when one of its rows does. */
const CHILD_FIELDS: Record<string, FieldSpec> = {
  'lines.item': { kind: 'text', ops: ['=', '!=', 'like', 'in'], values: ['bolt', 'nut', 'gear'] },
  'lines.qty': { kind: 'number', ops: ['=', '!=', '>', '<', 'between'], values: [0, 1, 2, 5, 10] },
};

let s: Seeded;
let caller: Caller;
let rows: Record<string, Value>[];
let lines: Map<string, Record<string, Value>[]>;

beforeAll(async () => {
  s = await seededSite();
  caller = {
    site: s.t.site,
    user: { name: 'Administrator', roles: new Set(['Administrator', 'System Manager']) },
    version: 2,
  };
  const pick = <T>(list: T[], i: number) => list[i % list.length] as T;
  for (let i = 0; i < 40; i++) {
    const body: Record<string, unknown> = {
      title: `${pick(WORDS, i * 7)}${i % 3 === 0 ? '' : i}`,
      status: pick(['Open', 'Closed', 'Cancelled'], i * 5),
      amount: pick([0, 10, 75, 100, 250.5, 500, 33], i * 3),
      qty: pick([-3, 0, 1, 2, 5, 10, 7], i * 11),
      urgent: i % 2,
    };
    const note = pick<Value | undefined>(['', null, undefined, 'bc', 'b%c', 'alpha', 'x'], i * 13);
    if (note !== undefined) body.note = note;
    const customer = pick<Value>(['Acme', 'Globex', 'Initech', null], i);
    if (customer !== null) body.customer = customer;
    const date = pick<Value>(['2024-01-01', '2024-02-15', null, '2024-03-01', '2023-12-31'], i * 17);
    if (date !== null) body.order_date = date;
    body.lines = Array.from({ length: i % 4 }, (_, j) => ({
      item: pick(['bolt', 'nut', 'gear'], i + j),
      qty: pick([0, 1, 2, 5, 10, 3], i * 7 + j),
    }));
    const res = await s.t.http
      .post('/api/v2/document/Query%20Order')
      .set('Authorization', s.t.adminToken)
      .send(body);
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  }
  const stored = (await s.t.site.db.knex('tabQuery Order').select('name', ...Object.keys(FIELDS))) as Record<
    string,
    unknown
  >[];
  rows = stored.map((r) => {
    const out: Record<string, Value> = { name: String(r.name) };
    for (const [f, spec] of Object.entries(FIELDS)) {
      const v = r[f];
      out[f] =
        v === null || v === undefined
          ? null
          : spec.kind === 'number'
            ? Number(v)
            : spec.kind === 'date'
              ? String(v).slice(0, 10)
              : String(v);
    }
    return out;
  });
  lines = new Map();
  for (const line of (await s.t.site.db
    .knex('tabQuery Order Line')
    .select('parent', 'item', 'qty')) as Record<string, unknown>[]) {
    const list = lines.get(String(line.parent)) ?? [];
    list.push({
      'lines.item': line.item as string,
      'lines.qty': line.qty === null ? null : Number(line.qty),
    });
    lines.set(String(line.parent), list);
  }
});
afterAll(() => s.t.close());

/** A condition as the client sends it, and how it is evaluated in memory. */
type Cond = [string, string, unknown];
type Tree = Cond | { op: 'and' | 'or'; children: Tree[] };

function like(text: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') re += (pattern[++i] ?? '').replace(/\W/g, '\\$&');
    else re += c === '%' ? '.*' : c === '_' ? '.' : c.replace(/\W/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'is').test(text);
}

function holds([field, op, value]: Cond, row: Record<string, Value>): boolean {
  const spec = (FIELDS[field] ?? CHILD_FIELDS[field]) as FieldSpec;
  const raw = row[field] as Value;
  const fallback = spec.kind === 'number' ? 0 : spec.kind === 'date' ? '0001-01-01' : '';
  const v = raw ?? fallback;
  const cmp = (a: Value, b: unknown) =>
    typeof a === 'number' ? a - Number(b) : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  switch (op) {
    case '=':
      return cmp(v, value) === 0;
    case '!=':
      return cmp(v, value) !== 0;
    case '>':
      return cmp(v, value) > 0;
    case '<':
      return cmp(v, value) < 0;
    case '>=':
      return cmp(v, value) >= 0;
    case '<=':
      return cmp(v, value) <= 0;
    case 'like':
      return like(String(v), value as string);
    case 'not like':
      return !like(String(v), value as string);
    case 'in':
      return (value as Value[]).some((x) => cmp(v, x) === 0);
    case 'not in':
      return !(value as Value[]).some((x) => cmp(v, x) === 0);
    case 'between':
      return cmp(v, (value as Value[])[0] as Value) >= 0 && cmp(v, (value as Value[])[1] as Value) <= 0;
    case 'is': {
      const set = raw !== null && raw !== '';
      return value === 'set' ? set : !set;
    }
    default:
      throw new Error(op);
  }
}

const isChild = (c: Tree): c is Cond => Array.isArray(c) && c[0] in CHILD_FIELDS;
/** Child conditions of one AND group hold together for one child row (as Frappe's join); alone, for some row. */
const someLine = (conds: Cond[], row: Record<string, Value>) =>
  (lines.get(row.name as string) ?? []).some((l) => conds.every((c) => holds(c, l)));

function evaluate(tree: Tree, row: Record<string, Value>): boolean {
  if (Array.isArray(tree)) return isChild(tree) ? someLine([tree], row) : holds(tree, row);
  if (tree.op === 'or') return tree.children.some((c) => evaluate(c, row));
  return evaluateAnd(tree.children, row);
}

function evaluateAnd(children: Tree[], row: Record<string, Value>): boolean {
  const child = children.filter(isChild);
  return (
    children.filter((c) => !isChild(c)).every((c) => evaluate(c, row)) &&
    (child.length === 0 || someLine(child, row))
  );
}

/** Frappe's nested syntax: `[a, "or", b, "or", c]`. */
function encode(tree: Tree): unknown {
  if (Array.isArray(tree)) return tree;
  return tree.children.flatMap((c, i) => (i === 0 ? [encode(c)] : [tree.op, encode(c)]));
}

const condition: fc.Arbitrary<Cond> = fc
  .constantFrom(...Object.keys(FIELDS), ...Object.keys(CHILD_FIELDS))
  .chain((field) => {
    const spec = (FIELDS[field] ?? CHILD_FIELDS[field]) as FieldSpec;
    const value = fc.constantFrom(...spec.values);
    return fc.constantFrom(...spec.ops).chain((op): fc.Arbitrary<Cond> => {
      if (op === 'in' || op === 'not in')
        return fc.uniqueArray(value, { maxLength: 3 }).map((v) => [field, op, v]);
      if (op === 'between') return fc.tuple(value, value).map(([a, b]) => [field, op, [a, b]]);
      if (op === 'like' || op === 'not like')
        return fc.constantFrom(...LIKE_PATTERNS).map((p) => [field, op, p]);
      if (op === 'is') return fc.constantFrom('set', 'not set').map((v) => [field, op, v]);
      return value.map((v) => [field, op, v]);
    });
  });

const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    condition,
    fc.record({
      op: fc.constantFrom<'and' | 'or'>('and', 'or'),
      children: fc.array(tie('node'), { minLength: 2, maxLength: 3 }),
    }),
  ),
})).node;

test('the engine selects exactly the rows the filters select in memory (filters + or_filters)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(tree, { minLength: 1, maxLength: 3 }),
      fc.array(condition, { maxLength: 3 }),
      async (filters, orFilters) => {
        const params = { fields: ['name'], filters: filters.map(encode), or_filters: orFilters, limit: 1000 };
        const page = await listDocuments(caller, 'Query Order', params);
        const got = (page.data as { name: string }[]).map((r) => r.name).sort();
        const want = rows
          .filter(
            (row) =>
              evaluateAnd(filters, row) &&
              (orFilters.length === 0 || orFilters.some((c) => evaluate(c, row))),
          )
          .map((r) => r.name as string)
          .sort();
        expect(got).toEqual(want);
        expect(await countDocuments(caller, 'Query Order', params)).toBe(want.length);
      },
    ),
    { numRuns: 150, seed: 20261122 },
  );
});
