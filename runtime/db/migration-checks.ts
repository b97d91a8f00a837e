// The checks of a migration plan, run before any DDL: bound queries that find the rows a change would hurt. A value
// that would not convert exactly, a value held twice under a new unique index (a new column's default included), or
// rows under a naming change refuse the change (naming the field, the number of rows and up to five documents or
// values); Select values outside the new options, rows without a value in a field made mandatory, values in a removed
// field's column and rows of an orphan table become warnings.
import type { Knex } from 'knex';
import type { SchemaDialect } from './backend';
import type { ChangeCheck, SchemaChange } from './migration-plan';
import { typeFamily } from './type-families';

/** How many document names or values a refusal names. */
const SAMPLE = 5;

const quoted = (values: readonly unknown[]) => values.map((v) => JSON.stringify(String(v))).join(', ');

async function count(query: Knex.QueryBuilder): Promise<number> {
  const row = (await query.clone().clearSelect().clearOrder().count({ n: '*' }).first()) as
    { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** Runs one check; returns a refusal or a warning, or nothing. */
async function runCheck(
  knex: Knex,
  dialect: SchemaDialect,
  change: SchemaChange,
  check: ChangeCheck,
): Promise<{ refusal?: string; warning?: string }> {
  const { table, doctype } = change;
  switch (check.kind) {
    case 'inexact': {
      const condition = dialect.inexactValues(knex, check.column, check.from, check.to);
      const text = typeFamily(check.from).family === 'text';
      if (!condition && !check.emptyToNull) return {};
      // One scan counts both the values that would not convert and the empty ones.
      const c = knex.raw('??', [check.column]).toQuery();
      const bad = !condition
        ? { sql: '0 = 1', bindings: [] as readonly (string | number)[] }
        : condition === 'all'
          ? { sql: text ? `${c} <> ''` : '1 = 1', bindings: [] as readonly (string | number)[] }
          : { sql: text ? `${c} <> '' and (${condition.sql})` : condition.sql, bindings: condition.bindings };
      const counts = (await knex(table)
        .whereNotNull(check.column)
        .select(
          knex.raw(`coalesce(sum(case when ${bad.sql} then 1 else 0 end), 0) as bad`, bad.bindings),
          knex.raw(text ? `coalesce(sum(case when ${c} = '' then 1 else 0 end), 0) as empty` : '0 as empty'),
        )
        .first()) as { bad: number | string; empty: number | string } | undefined;
      const n = Number(counts?.bad ?? 0);
      if (check.emptyToNull && !Number(counts?.empty ?? 0))
        change.statements = change.statements.filter((s) => s !== check.emptyToNull);
      if (!n) return {};
      const query = knex(table).whereNotNull(check.column).andWhereRaw(bad.sql, bad.bindings);
      const names = (await query.select('name').orderBy('name').limit(SAMPLE)) as { name: string }[];
      const target = dialect.columnType(check.to);
      return {
        refusal: `${doctype}: cannot change ${check.column} from ${check.from} to ${target}: ${n} row${n === 1 ? '' : 's'} hold${n === 1 ? 's' : ''} a value that would not convert exactly (${quoted(names.map((r) => r.name))})`,
      };
    }
    case 'duplicates': {
      const groups = knex(table)
        .select({ value: check.column })
        .count({ n: '*' })
        .whereNotNull(check.column)
        .groupBy(check.column)
        .havingRaw('count(*) > 1');
      const n = Number(
        ((await knex.count({ n: '*' }).from(groups.clone().as('d')).first()) as { n: unknown } | undefined)
          ?.n ?? 0,
      );
      if (!n) return {};
      const values = (await groups.orderBy('n', 'desc').orderBy('value').limit(SAMPLE)) as {
        value: unknown;
      }[];
      return {
        refusal: `${doctype}: cannot make ${check.column} unique: ${n} value${n === 1 ? ' is' : 's are'} held by more than one document (${quoted(values.map((r) => r.value))})`,
      };
    }
    case 'rows': {
      const n = await count(knex(table));
      return n
        ? {
            refusal: `${doctype}: cannot change naming to autoincrement: the table holds ${n} row${n === 1 ? '' : 's'}`,
          }
        : {};
    }
    case 'shared_default': {
      const n = await count(knex(table));
      return n > 1
        ? {
            refusal: `${doctype}: cannot make new field ${check.column} unique: its default ${quoted([check.value])} would be held by all ${n} rows`,
          }
        : {};
    }
    case 'outside_options': {
      const query = knex(table)
        .whereNotNull(check.column)
        .andWhere(check.column, '<>', '')
        .whereNotIn(check.column, check.options.filter(Boolean));
      const n = await count(query);
      return n
        ? {
            warning: `${n} stored value${n === 1 ? ' is' : 's are'} outside the new options of ${check.column} (kept, still readable)`,
          }
        : {};
    }
    case 'missing_values': {
      const c = check.column;
      const query = check.added
        ? knex(table)
        : knex(table).where((q) => (check.text ? q.whereNull(c).orWhere(c, '') : q.whereNull(c)));
      const n = await count(query);
      return n
        ? {
            warning: `${n} row${n === 1 ? ' holds' : 's hold'} no value in ${c} (kept; the next save of each must set it)`,
          }
        : {};
    }
    case 'held_values': {
      const c = check.column;
      const query = knex(table).whereNotNull(c);
      const n = await count(check.text ? query.andWhere(c, '<>', '') : query);
      if (!n) return {};
      const rows = `${n} row${n === 1 ? ' holds' : 's hold'} a value in ${c}`;
      return {
        warning: check.dropped
          ? `${rows}: dropping the column destroys ${n === 1 ? 'it' : 'them'}`
          : `${rows} (kept; --drop-removed would destroy ${n === 1 ? 'it' : 'them'})`,
      };
    }
    case 'orphan_rows': {
      const n = await count(knex(table));
      return n
        ? { warning: `table ${table} holds ${n} row${n === 1 ? '' : 's'} and belongs to no DocType` }
        : {};
    }
    case 'parentless_rows': {
      const n = await count(knex(table));
      return n
        ? {
            warning: `${n} row${n === 1 ? '' : 's'} of ${doctype} belong${n === 1 ? 's' : ''} to no parent document now that it is a child table (kept; no document lists ${n === 1 ? 'it' : 'them'})`,
          }
        : {};
    }
    default:
      return check satisfies never;
  }
}

/**
 * Runs the checks of every change: refusals and warnings are written into the changes. Orphan tables without rows are
 * left out of the result (nothing to say).
 */
export async function checkPlan(
  knex: Knex,
  dialect: SchemaDialect,
  plan: SchemaChange[],
): Promise<SchemaChange[]> {
  const kept: SchemaChange[] = [];
  for (const change of plan) {
    for (const check of change.checks) {
      const { refusal, warning } = await runCheck(knex, dialect, change, check);
      // Every refusal of the change, not the first alone: one edit that breaks several fields names them all at once.
      if (refusal) change.refusal = change.refusal === undefined ? refusal : `${change.refusal}; ${refusal}`;
      if (warning) change.warnings.push(warning);
    }
    if (change.kind === 'orphan_table' && !change.warnings.length) continue;
    kept.push(change);
  }
  return kept;
}
