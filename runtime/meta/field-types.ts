// The one table of Frappe field types: how each is stored, typed and validated.

/** Every Frappe DocField type this service understands. */
export const FIELD_TYPES = [
  'Data',
  'Small Text',
  'Text',
  'Long Text',
  'Text Editor',
  'HTML Editor',
  'Markdown Editor',
  'Code',
  'JSON',
  'Int',
  'Long Int',
  'Float',
  'Currency',
  'Percent',
  'Rating',
  'Check',
  'Select',
  'Autocomplete',
  'Link',
  'Dynamic Link',
  'Table',
  'Table MultiSelect',
  'Date',
  'Datetime',
  'Time',
  'Duration',
  'Password',
  'Attach',
  'Attach Image',
  'Image',
  'Color',
  'Phone',
  'Barcode',
  'Signature',
  'Geolocation',
  'Icon',
  'Read Only',
  'Section Break',
  'Column Break',
  'Tab Break',
  'HTML',
  'Heading',
  'Button',
  'Fold',
] as const;

/** A Frappe field type name. */
export type FieldType = (typeof FIELD_TYPES)[number];

/** How a field type is kept in the database. `none` stores nothing; `table` lives in a child table. */
export type ColumnKind =
  | 'varchar'
  | 'text'
  | 'longtext'
  | 'int'
  | 'bigint'
  | 'decimal'
  | 'rating'
  | 'check'
  | 'date'
  | 'datetime'
  | 'time'
  | 'json'
  | 'table'
  | 'none';

/**
 * The integer values a column kind takes where narrower than 64 bits (Frappe's MariaDB columns, the narrowest of the
 * databases: Int is int(11); Long Int a bigint, whose values the wire keeps to JavaScript's safe integers). A Check
 * takes 0 and 1 only, whatever its column could hold: a type change to Check refuses rows of other values (a 2 or a -1
 * would reach the wire as a Check).
 */
export const INTEGER_RANGE: Partial<Record<ColumnKind, readonly [number, number]>> = {
  int: [-2147483648, 2147483647],
  check: [0, 1],
};

/**
 * The largest magnitude a decimal kind holds (exclusive), and its decimal places: MariaDB's and PostgreSQL's
 * decimal(21,9) of Float, Currency, Percent and Duration, and Rating's decimal(3,2).
 */
export const DECIMAL_LIMITS: Partial<Record<ColumnKind, { below: number; places: number }>> = {
  decimal: { below: 1e12, places: 9 },
  rating: { below: 10, places: 2 },
};

/** The value shape a field accepts on the wire, before storage. */
export type ValueKind =
  'string' | 'integer' | 'number' | 'check' | 'date' | 'datetime' | 'time' | 'json' | 'rows' | 'none';

/** Storage and wire facts for one field type. */
export interface FieldTypeInfo {
  column: ColumnKind;
  value: ValueKind;
}

const text = (column: ColumnKind): FieldTypeInfo => ({ column, value: 'string' });

/** Storage and wire facts per field type (Frappe's MariaDB column mapping). */
export const FIELD_TYPE_INFO: Readonly<Record<FieldType, FieldTypeInfo>> = {
  Data: text('varchar'),
  'Small Text': text('text'),
  Text: text('text'),
  'Long Text': text('longtext'),
  'Text Editor': text('longtext'),
  'HTML Editor': text('longtext'),
  'Markdown Editor': text('longtext'),
  Code: text('longtext'),
  JSON: { column: 'json', value: 'json' },
  Int: { column: 'int', value: 'integer' },
  'Long Int': { column: 'bigint', value: 'integer' },
  Float: { column: 'decimal', value: 'number' },
  Currency: { column: 'decimal', value: 'number' },
  Percent: { column: 'decimal', value: 'number' },
  Rating: { column: 'rating', value: 'number' },
  Check: { column: 'check', value: 'check' },
  Select: text('varchar'),
  Autocomplete: text('varchar'),
  Link: text('varchar'),
  'Dynamic Link': text('varchar'),
  Table: { column: 'table', value: 'rows' },
  'Table MultiSelect': { column: 'table', value: 'rows' },
  Date: { column: 'date', value: 'date' },
  Datetime: { column: 'datetime', value: 'datetime' },
  Time: { column: 'time', value: 'time' },
  Duration: { column: 'decimal', value: 'number' },
  Password: text('text'),
  Attach: text('text'),
  'Attach Image': text('text'),
  Image: { column: 'none', value: 'none' },
  Color: text('varchar'),
  Phone: text('varchar'),
  Barcode: text('longtext'),
  Signature: text('longtext'),
  Geolocation: text('longtext'),
  Icon: text('varchar'),
  'Read Only': text('varchar'),
  'Section Break': { column: 'none', value: 'none' },
  'Column Break': { column: 'none', value: 'none' },
  'Tab Break': { column: 'none', value: 'none' },
  HTML: { column: 'none', value: 'none' },
  Heading: { column: 'none', value: 'none' },
  Button: { column: 'none', value: 'none' },
  Fold: { column: 'none', value: 'none' },
};

/** True when the type has a column of its own in the DocType's table. */
export function storesValue(type: FieldType): boolean {
  const { column } = FIELD_TYPE_INFO[type];
  return column !== 'none' && column !== 'table';
}

/** True for Table and Table MultiSelect: rows of a child DocType. */
export function isTableType(type: FieldType): boolean {
  return FIELD_TYPE_INFO[type].column === 'table';
}

/** True when `value` names a known field type. */
export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

/** Exhaustiveness guard for switches over closed unions. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}

/** The Data `options` Frappe validates. */
export const DATA_OPTIONS = ['Email', 'Phone', 'URL', 'Name'] as const;

/** True for a Data field whose options Frappe validates. */
export function hasDataOption(field: { fieldtype: FieldType; options?: string }): boolean {
  return (
    field.fieldtype === 'Data' && (DATA_OPTIONS as readonly (string | undefined)[]).includes(field.options)
  );
}
