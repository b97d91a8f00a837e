// The columns and indexes of a DocType's table as this service defines them: Frappe's standard columns, then one per
// stored field. knex's schema builder writes them (each backend's knex dialect picks the column types); migrate.ts
// creates tables from them and the migration planner compares them with the live table.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { FIELD_TYPE_INFO, assertNever, storesValue, type ColumnKind } from '../meta/field-types';
import type { DocTypeMeta, FieldMeta } from '../meta/types';

/** A column as this service defines it. */
export interface ColumnSpec {
  name: string;
  /** Adds the column to a table builder; returns it (to chain `.alter()`), or nothing for a column-less kind. */
  add: (table: Knex.CreateTableBuilder | Knex.AlterTableBuilder) => Knex.ColumnBuilder | undefined;
  /** Index kind, if the column is indexed. */
  index?: 'unique' | 'plain';
  /** The field the column stores (absent for standard columns). */
  field?: FieldMeta;
  /** How the field's value is stored (absent for standard columns). */
  kind?: ColumnKind;
  /** varchar length. */
  length?: number;
}

/** Default varchar length of Data-like fields (Frappe's). */
export const VARCHAR_LENGTH = 140;

/**
 * The field's default as a column default, when it is a constant of the column's kind (as Frappe: not `Today`, `Now`,
 * `__user` nor `:…`, and a Select default among its options); otherwise undefined.
 */
export function columnDefault(field: FieldMeta, kind: ColumnKind): string | number | undefined {
  const raw = field.default;
  if (raw === undefined || raw === '' || raw.startsWith(':') || raw === '__user' || raw === 'user')
    return undefined;
  switch (kind) {
    case 'int':
    case 'bigint':
    case 'check': {
      const n = Number(raw);
      return Number.isInteger(n) ? (kind === 'check' ? (n ? 1 : 0) : n) : undefined;
    }
    case 'decimal':
    case 'rating': {
      const n = Number(raw);
      return Number.isFinite(n) ? n : undefined;
    }
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(raw) ? raw : undefined;
    case 'datetime':
    case 'time':
      return undefined;
    case 'varchar':
    case 'text':
    case 'longtext':
    case 'json':
      if (field.fieldtype === 'Select' && field.selectOptions && !field.selectOptions.includes(raw))
        return undefined;
      return kind === 'varchar' && raw.length > (field.length ?? VARCHAR_LENGTH) ? undefined : raw;
    case 'table':
    case 'none':
      return undefined;
    default:
      return assertNever(kind);
  }
}

/** Whether a backend can give a column of this kind a default in its definition (MariaDB: not TEXT before 10.2). */
export function defaultInDefinition(kind: ColumnKind): boolean {
  return kind !== 'text' && kind !== 'longtext' && kind !== 'json';
}

/** Column kinds whose column defaults to 0 when the field has no default of its own (Frappe's not-null numbers). */
const ZERO_DEFAULT: ReadonlySet<ColumnKind> = new Set(['int', 'bigint', 'decimal', 'check']);

/** What the existing rows hold once the field's column is added: its column default (0 for numbers), if any. */
export function addedColumnValue(field: FieldMeta, kind: ColumnKind): string | number | undefined {
  return columnDefault(field, kind) ?? (ZERO_DEFAULT.has(kind) ? 0 : undefined);
}

function fieldColumn(field: FieldMeta, kind: ColumnKind): ColumnSpec['add'] {
  const name = field.fieldname;
  const fixed = defaultInDefinition(kind) ? addedColumnValue(field, kind) : undefined;
  const withDefault = (column: Knex.ColumnBuilder) =>
    fixed !== undefined ? column.defaultTo(fixed) : column;
  return (t) => {
    switch (kind) {
      case 'varchar':
        return withDefault(t.string(name, field.length ?? VARCHAR_LENGTH).nullable());
      case 'text':
        return t.text(name).nullable();
      case 'longtext':
      case 'json':
        return t.text(name, 'longtext').nullable();
      case 'int':
        return withDefault(t.integer(name).nullable());
      case 'bigint':
        return withDefault(t.bigInteger(name).nullable());
      case 'decimal':
        return withDefault(t.decimal(name, 21, 9).nullable());
      case 'rating':
        return withDefault(t.decimal(name, 3, 2).nullable());
      case 'check':
        return withDefault(t.tinyint(name).notNullable());
      case 'date':
        return withDefault(t.date(name).nullable());
      case 'datetime':
        return t.datetime(name, { precision: 6 }).nullable();
      case 'time':
        return t.specificType(name, 'time(6)').nullable();
      case 'table':
      case 'none':
        return undefined;
      default:
        return assertNever(kind);
    }
  };
}

/**
 * Column kinds an index can cover without a prefix length (MariaDB cannot index TEXT whole): as Frappe, a unique field
 * of any of them gets a unique index; Text-like long types get none (the document checks still refuse a repeat).
 */
const INDEXABLE: ReadonlySet<ColumnKind> = new Set([
  'varchar',
  'int',
  'bigint',
  'decimal',
  'rating',
  'check',
  'date',
  'datetime',
  'time',
]);

/** The standard columns, never compared nor dropped by a migration. */
export function standardColumns(meta: DocTypeMeta): ColumnSpec[] {
  const columns: ColumnSpec[] = [
    { name: 'name', add: (t) => t.string('name', 140).primary() },
    {
      name: 'creation',
      add: (t) => t.datetime('creation', { precision: 6 }).nullable(),
      index: meta.istable ? undefined : 'plain',
    },
    {
      name: 'modified',
      add: (t) => t.datetime('modified', { precision: 6 }).nullable(),
      index: meta.istable ? undefined : 'plain',
    },
    { name: 'modified_by', add: (t) => t.string('modified_by', 140).nullable() },
    { name: 'owner', add: (t) => t.string('owner', 140).nullable() },
    { name: 'docstatus', add: (t) => t.integer('docstatus').notNullable().defaultTo(0) },
    { name: 'idx', add: (t) => t.integer('idx').notNullable().defaultTo(0) },
  ];
  if (meta.istable) {
    columns.push(
      { name: 'parent', add: (t) => t.string('parent', 140).nullable(), index: 'plain' },
      { name: 'parentfield', add: (t) => t.string('parentfield', 140).nullable() },
      { name: 'parenttype', add: (t) => t.string('parenttype', 140).nullable() },
    );
  }
  return columns;
}

/** The columns of a DocType's table, standard ones first. */
export function columnSpecs(meta: DocTypeMeta): ColumnSpec[] {
  const columns = standardColumns(meta);
  // As Frappe: a field is indexed when its definition asks (search_index, on a column of any type but the long texts),
  // not for being a Link. Indexing every Link made each insert of a Link-rich DocType update dozens of B-trees (ToDo: 8
  // instead of 4, about a fifth of a create's cost); a DocType filtered by a Link sets search_index on it. The cap keeps
  // MariaDB under its 64 indexes.
  let searchIndexes = 0;
  for (const field of meta.fields) {
    if (!storesValue(field.fieldtype)) continue;
    const kind = FIELD_TYPE_INFO[field.fieldtype].column;
    let index: ColumnSpec['index'];
    if (field.unique && INDEXABLE.has(kind)) index = 'unique';
    // The default list order (sort_field) is read on every list without order_by: index it when its column can be.
    else if (field.fieldname === meta.sortField && !meta.istable && INDEXABLE.has(kind)) index = 'plain';
    else if (field.searchIndex && INDEXABLE.has(kind) && searchIndexes < 40) {
      index = 'plain';
      searchIndexes++;
    }
    columns.push({
      name: field.fieldname,
      add: fieldColumn(field, kind),
      field,
      kind,
      ...(kind === 'varchar' ? { length: field.length ?? VARCHAR_LENGTH } : {}),
      ...(index ? { index } : {}),
    });
  }
  return columns;
}

/** An index name unique across the database (SQLite index names are global) and within 64 characters. */
export function indexName(table: string, column: string): string {
  const plain = `idx_${table}_${column}`.replace(/[^A-Za-z0-9_]/g, '_');
  if (plain.length <= 60) return plain;
  return `${plain.slice(0, 48)}_${createHash('sha1').update(plain).digest('hex').slice(0, 10)}`;
}

/** The CREATE TABLE (and CREATE INDEX) statements of a DocType's table. */
export function createTable(
  knex: Knex,
  table: string,
  specs: ColumnSpec[],
  options: (t: Knex.CreateTableBuilder) => void,
): Knex.SchemaBuilder {
  return knex.schema.createTable(table, (t) => {
    for (const spec of specs) spec.add(t);
    for (const spec of specs) {
      if (spec.index === 'unique') t.unique([spec.name], { indexName: indexName(table, spec.name) });
      else if (spec.index === 'plain') t.index([spec.name], indexName(table, spec.name));
    }
    options(t);
  });
}
