// The migration planner: a DocType's metadata and its live table (columns, indexes) in, the list of changes out, each
// with the SQL it runs. Pure: it reads nothing; the checks a change needs before it may run (values that would not
// convert, duplicates under a new unique index, rows under a naming change) are data that migration-checks.ts runs as
// bound queries. Everything backend-specific (column types, conversions, index DDL) comes from the SchemaDialect.
import type { Knex } from 'knex';
import { FIELD_TYPE_INFO, storesValue } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';
import type { ColumnTarget, LiveIndex, SchemaDialect } from './backend';
import {
  addedColumnValue,
  columnDefault,
  columnSpecs,
  createTable,
  defaultInDefinition,
  indexName,
  standardColumns,
  type ColumnSpec,
} from './table-columns';
import { kindFamily, typeFamily } from './type-families';

/** What a change does. */
export type ChangeKind =
  | 'create_table'
  | 'add_column'
  | 'change_type'
  | 'change_default'
  | 'drop_index'
  | 'add_index'
  | 'removed_field'
  | 'drop_column'
  | 'select_options'
  | 'mandatory'
  | 'naming'
  | 'orphan_table';

/** A query a change needs answered before it runs: a refusal or a warning. */
export type ChangeCheck =
  /** Rows whose value would not convert exactly refuse the change. */
  | { kind: 'inexact'; column: string; from: string; to: ColumnTarget; emptyToNull?: string }
  /** Values held by more than one row refuse a unique index. */
  | { kind: 'duplicates'; column: string }
  /** Any row refuses the change (naming changed to autoincrement). */
  | { kind: 'rows' }
  /** A unique index on a column added with a default: more than one row would hold the default. */
  | { kind: 'shared_default'; column: string; value: string | number }
  /** Stored values outside the options are counted in a warning. */
  | { kind: 'outside_options'; column: string; options: string[] }
  /** The rows of a table no DocType owns are counted in a warning (none: no change). */
  | { kind: 'orphan_rows' }
  /** The rows of a DocType made a child table are counted in a warning: they belong to no parent document. */
  | { kind: 'parentless_rows' }
  /**
   * Rows without a value (NULL; empty text too) in a field made mandatory are counted in a warning: their next save
   * must set it. `added`: the column is added now, so every row is counted.
   */
  | { kind: 'missing_values'; column: string; text: boolean; added: boolean }
  /** Rows holding a value (not NULL, not empty text) in a removed field's column are counted in a warning. */
  | { kind: 'held_values'; column: string; text: boolean; dropped: boolean };

/** One change of a plan. */
export interface SchemaChange {
  /** The DocType (for an orphan table: the table). */
  doctype: string;
  table: string;
  kind: ChangeKind;
  /** The field (fields, comma-separated, for a type change of several). */
  field?: string;
  /** What changes, in words (`qty: varchar(140) → integer`). */
  detail: string;
  /** The SQL it runs, in order. */
  statements: string[];
  warnings: string[];
  /** Why it may not run (set by the checks). */
  refusal?: string;
  checks: ChangeCheck[];
}

/** A live table as the catalogue describes it. */
export interface LiveTable {
  columns: Map<string, string>;
  indexes: Map<string, LiveIndex>;
}

/** What the last migration recorded of a DocType: its naming rule, Select options, mandatory fields and defaults. */
export interface RecordedShape {
  naming?: string;
  options?: Record<string, string[]>;
  /** Absent in what a release before 2026-11-29 recorded: no field then counts as newly mandatory. */
  reqd?: string[];
  /** Each column's default (null: none). Absent before 2026-11-30: no default then counts as changed. */
  defaults?: Record<string, string | number | null>;
}

/** The default a field's column is made with (null: none); undefined for a field without a column. */
function definedDefault(field: FieldMeta): string | number | null | undefined {
  if (!storesValue(field.fieldtype)) return undefined;
  const kind = FIELD_TYPE_INFO[field.fieldtype].column;
  return defaultInDefinition(kind) ? (addedColumnValue(field, kind) ?? null) : null;
}

/** The shape a migration records of a DocType (compared next time). */
export function shapeOf(meta: DocTypeMeta): RecordedShape {
  const options: Record<string, string[]> = {};
  const reqd: string[] = [];
  const defaults: Record<string, string | number | null> = {};
  for (const field of meta.fields) {
    if (field.fieldtype === 'Select') options[field.fieldname] = field.selectOptions ?? [];
    if (field.reqd && storesValue(field.fieldtype)) reqd.push(field.fieldname);
    const fixed = definedDefault(field);
    if (fixed !== undefined) defaults[field.fieldname] = fixed;
  }
  return { naming: meta.naming.kind, options, reqd, defaults };
}

/** How to plan. */
export interface PlanOptions {
  /** Drop the columns of removed fields (`svc migrate --drop-removed`). */
  dropRemoved?: boolean;
}

const sameOptions = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((o, i) => o === b[i]);

/** The changes that bring `live` (undefined: no table yet) to `meta`. */
export function planDocType(
  knex: Knex,
  dialect: SchemaDialect,
  meta: DocTypeMeta,
  live: LiveTable | undefined,
  recorded: RecordedShape | undefined,
  options: PlanOptions = {},
): SchemaChange[] {
  const table = meta.tableName;
  const specs = columnSpecs(meta);
  const change = (kind: ChangeKind, detail: string, extra: Partial<SchemaChange> = {}): SchemaChange => ({
    doctype: meta.name,
    table,
    kind,
    detail,
    statements: [],
    warnings: [],
    checks: [],
    ...extra,
  });
  if (!live) {
    const builder = createTable(knex, table, specs, (t) => dialect.tableOptions(t));
    const statements = (builder.toSQL() as { sql: string; bindings: readonly Knex.Value[] }[]).map((s) =>
      knex.raw(s.sql, s.bindings).toQuery(),
    );
    return [change('create_table', `table ${table}`, { statements })];
  }
  const changes: SchemaChange[] = [];
  const standard = new Set(standardColumns(meta).map((s) => s.name));
  const fieldSpecs = specs.filter((s) => s.kind);

  if (recorded?.naming && recorded.naming !== meta.naming.kind && meta.naming.kind === 'autoincrement')
    changes.push(
      change('naming', `naming ${recorded.naming} → autoincrement`, { checks: [{ kind: 'rows' }] }),
    );

  // Indexes this service made (idx_<table>_<column>) that the DocType no longer declares, or declares otherwise.
  const wanted = new Map(specs.filter((s) => s.index).map((s) => [indexName(table, s.name), s]));
  const indexesAfter = new Map(live.indexes);
  const ownIndexes = new Map([...live.columns.keys()].map((c) => [indexName(table, c), c]));
  for (const [index, info] of live.indexes) {
    const column = ownIndexes.get(index);
    if (!column || standard.has(column)) continue;
    const spec = wanted.get(index);
    if (spec && (spec.index === 'unique') === info.unique) continue;
    indexesAfter.delete(index);
    changes.push(
      change('drop_index', `${info.unique ? 'unique ' : ''}index on ${column}`, {
        field: column,
        statements: [dialect.dropIndex(knex, table, index)],
      }),
    );
  }

  const addColumn = (spec: ColumnSpec): string[] =>
    (
      knex.schema
        .alterTable(table, (t) => {
          spec.add(t);
        })
        .toSQL() as { sql: string; bindings: readonly Knex.Value[] }[]
    ).map((s) => knex.raw(s.sql, s.bindings).toQuery());

  // Standard columns the table lacks: a DocType made a child table gains parent, parentfield and parenttype (its rows
  // so far belong to no parent document: counted in a warning).
  for (const spec of standardColumns(meta).filter((s) => !live.columns.has(s.name)))
    changes.push(
      change('add_column', `${spec.name} (a standard column)`, {
        field: spec.name,
        statements: addColumn(spec),
        checks: spec.name === 'parenttype' ? [{ kind: 'parentless_rows' }] : [],
      }),
    );

  const added = fieldSpecs.filter((s) => !live.columns.has(s.name) && s.kind);
  for (const spec of added) {
    const field = spec.field!;
    const statements = addColumn(spec);
    const fixed = columnDefault(field, spec.kind!);
    // What the existing rows hold afterwards (a number field without a default: 0).
    const held = addedColumnValue(field, spec.kind!);
    // Where the column definition cannot hold the default (TEXT), the existing rows are given it by an UPDATE.
    if (fixed !== undefined && !defaultInDefinition(spec.kind!))
      statements.push(
        knex(table)
          .update({ [spec.name]: fixed })
          .whereNull(spec.name)
          .toQuery(),
      );
    changes.push(
      change(
        'add_column',
        `${spec.name} ${dialect.columnType({ kind: spec.kind!, length: spec.length })}${held !== undefined ? ` default ${String(held)}` : ''}`,
        {
          field: spec.name,
          statements,
        },
      ),
    );
  }

  const converted = fieldSpecs.filter((s) => {
    const type = live.columns.get(s.name);
    return type !== undefined && type !== dialect.columnType({ kind: s.kind!, length: s.length });
  });
  // Columns whose default changed since the last migration (Frappe alters it too): the column is made again with its
  // new default, as a type change makes it; the rows keep their values.
  const redefaulted = fieldSpecs.filter((s) => {
    const before = recorded?.defaults?.[s.name];
    return (
      before !== undefined &&
      live.columns.has(s.name) &&
      !converted.includes(s) &&
      before !== definedDefault(s.field!)
    );
  });
  const remade = (names: string[], indexes: Map<string, LiveIndex>) =>
    dialect.changeColumnTypes(knex, {
      table,
      specs,
      kept: new Map(
        [...live.columns].filter(([name]) => !standard.has(name) && !specs.some((s) => s.name === name)),
      ),
      changed: names,
      indexes,
    });
  if (converted.length) {
    const statements: string[] = [];
    const checks: ChangeCheck[] = [];
    for (const spec of converted) {
      const from = live.columns.get(spec.name)!;
      const to: ColumnTarget = { kind: spec.kind!, length: spec.length };
      const check: Extract<ChangeCheck, { kind: 'inexact' }> = {
        kind: 'inexact',
        column: spec.name,
        from,
        to,
      };
      checks.push(check);
      // Empty text holds no number, date or time: it becomes NULL (Check: 0) before the column changes.
      if (
        typeFamily(from).family === 'text' &&
        to.kind !== 'varchar' &&
        to.kind !== 'text' &&
        to.kind !== 'longtext' &&
        to.kind !== 'json'
      )
        // The checks count the empty values in the same scan and drop this statement when there are none.
        statements.push(
          (check.emptyToNull = knex(table)
            .update({ [spec.name]: null })
            .where(spec.name, '')
            .toQuery()),
        );
      if (to.kind === 'check')
        statements.push(
          knex(table)
            .update({ [spec.name]: 0 })
            .whereNull(spec.name)
            .toQuery(),
        );
    }
    // A default changed beside a type change is made in the same statements (SQLite: the same rebuild).
    statements.push(
      ...remade(
        [...converted, ...redefaulted].map((s) => s.name),
        indexesAfter,
      ),
    );
    changes.push(
      change(
        'change_type',
        converted
          .map(
            (s) =>
              `${s.name}: ${live.columns.get(s.name)!} → ${dialect.columnType({ kind: s.kind!, length: s.length })}`,
          )
          .join(', '),
        { field: converted.map((s) => s.name).join(', '), statements, checks },
      ),
    );
  }

  if (redefaulted.length && !converted.length)
    changes.push(
      change(
        'change_default',
        redefaulted.map((s) => `${s.name} default ${String(definedDefault(s.field!) ?? 'none')}`).join(', '),
        {
          field: redefaulted.map((s) => s.name).join(', '),
          statements: remade(
            redefaulted.map((s) => s.name),
            indexesAfter,
          ),
        },
      ),
    );

  for (const [index, spec] of wanted) {
    const have = indexesAfter.get(index);
    if (have) continue;
    const unique = spec.index === 'unique';
    changes.push(
      change('add_index', `${unique ? 'unique ' : ''}index on ${spec.name}`, {
        field: spec.name,
        statements: [
          dialect.addIndex(knex, table, index, spec.name, unique, { kind: spec.kind!, length: spec.length }),
        ],
        checks: !unique
          ? []
          : live.columns.has(spec.name)
            ? [{ kind: 'duplicates', column: spec.name }]
            : sharedDefault(spec),
      }),
    );
  }

  for (const [column, type] of live.columns) {
    if (standard.has(column) || specs.some((s) => s.name === column)) continue;
    const dropped = options.dropRemoved === true;
    const checks: ChangeCheck[] = [
      { kind: 'held_values', column, text: typeFamily(type).family === 'text', dropped },
    ];
    changes.push(
      dropped
        ? change('drop_column', `column ${column} (its field was removed)`, {
            field: column,
            statements: [knex.raw('alter table ?? drop column ??', [table, column]).toQuery()],
            checks,
          })
        : change('removed_field', `column ${column} kept (its field was removed; --drop-removed drops it)`, {
            field: column,
            checks,
          }),
    );
  }

  // A field made mandatory (or added mandatory without a default): the rows without a value are counted. Frappe, as
  // here, asks for the value at each such document's next save; nothing is written now.
  for (const spec of fieldSpecs) {
    const field = spec.field!;
    if (!field.reqd || !recorded?.reqd || recorded.reqd.includes(field.fieldname) || spec.kind === 'check')
      continue;
    const type = live.columns.get(spec.name);
    // A column added now gives every row its default (a number column without one: 0), or nothing.
    if (type === undefined && addedColumnValue(field, spec.kind!) !== undefined) continue;
    // Counted in the column as it is before this migration: empty text that a type change makes NULL counts.
    const text = type === undefined ? kindFamily(spec.kind!) === 'text' : typeFamily(type).family === 'text';
    changes.push(
      change('mandatory', `${spec.name} is mandatory now`, {
        field: spec.name,
        checks: [{ kind: 'missing_values', column: spec.name, text, added: type === undefined }],
      }),
    );
  }

  for (const spec of fieldSpecs) {
    const field = spec.field!;
    const before = recorded?.options?.[field.fieldname];
    const now = field.selectOptions ?? [];
    if (field.fieldtype !== 'Select' || !before || sameOptions(before, now) || !live.columns.has(spec.name))
      continue;
    changes.push(
      change('select_options', `${spec.name} options: ${now.filter(Boolean).join(', ')}`, {
        field: spec.name,
        checks: [{ kind: 'outside_options', column: spec.name, options: now }],
      }),
    );
  }
  return changes;
}

/**
 * The check of a unique index on a column added now: the existing rows all get its default, if it has one (a number
 * field without one: 0).
 */
function sharedDefault(spec: ReturnType<typeof columnSpecs>[number]): ChangeCheck[] {
  const value = spec.field && spec.kind ? addedColumnValue(spec.field, spec.kind) : undefined;
  return value === undefined ? [] : [{ kind: 'shared_default', column: spec.name, value }];
}

/** A warning-only change for a table no DocType owns (checked for rows). */
export function orphanTable(table: string): SchemaChange {
  return {
    doctype: table,
    table,
    kind: 'orphan_table',
    detail: `table ${table} belongs to no DocType`,
    statements: [],
    warnings: [],
    checks: [{ kind: 'orphan_rows' }],
  };
}
