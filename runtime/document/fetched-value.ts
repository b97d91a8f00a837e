// A value fetched from a linked document (fetch_from) in the form the fetching field stores it: converted as the body
// validator converts a value from the wire (a number into a Data field is its text, a numeric text into an Int its
// number), checked against the field's limits as a body value is (length, options, range), then normalized as every
// written value is (values.ts), so no column ever gets a value of another type or size. Frappe copies the value as it
// is and leaves the rest to its column; the one change it makes, HTML dropped when a Text Editor's value goes into a
// Data, Small Text or Text field, is made here too.
import { DataError } from '../errors/errors';
import { FIELD_TYPE_INFO, INTEGER_RANGE, assertNever, type FieldType } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';
import { normalizeValue } from './values';

/** The fetching field types Frappe gives a Text Editor's value as plain text (set_fetch_from_value). */
const PLAIN_TEXT: ReadonlySet<FieldType> = new Set(['Data', 'Small Text', 'Text']);

/** The named character references plainText decodes: those an editor writes for markup characters and spaces. */
const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
};

/** Frappe's strip_html, then unescape_html: tags dropped, numeric and the common named references decoded. */
function plainText(html: string): string {
  return html.replace(/<[^>]*>/g, '').replace(/&(#[xX][0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, ref: string) => {
    if (!ref.startsWith('#')) return ENTITIES[ref] ?? whole;
    const code = /^#[xX]/.test(ref) ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return valid ? String.fromCodePoint(code) : whole;
  });
}

/** A number as the wire's coercion reads it (a number, a numeric text, a boolean); NaN for anything else. */
function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return Number(value);
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  return NaN;
}

/**
 * `value`, which the linked document holds in a field of type `from`, in the form `field` stores it; `where` prefixes
 * a child row's messages. A value the field cannot hold is a 400 DataError naming the field and its fetch_from.
 */
export function fetchedValue(field: FieldMeta, from: FieldType, value: unknown, where: string): unknown {
  const refuse = (why: string) =>
    new DataError(`${where}${field.label} (${field.fieldname}): ${why} (fetched from ${field.fetchFrom})`);
  const normalized = (converted: unknown) => {
    try {
      return normalizeValue(field, converted);
    } catch (err) {
      if (!(err instanceof DataError)) throw err;
      throw new DataError(`${where}${err.message} (fetched from ${field.fetchFrom})`);
    }
  };
  const info = FIELD_TYPE_INFO[field.fieldtype];
  // As Frappe's get_valid_dict: an empty Check is 0; other empty values are NULL.
  if (value === undefined || value === null) return info.value === 'check' ? 0 : null;
  switch (info.value) {
    case 'string': {
      let text =
        typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
      if (from === 'Text Editor' && PLAIN_TEXT.has(field.fieldtype)) text = plainText(text);
      if (field.selectOptions && text !== '' && !field.selectOptions.includes(text))
        throw refuse(`"${text.slice(0, 140)}" is not one of its options`);
      const length = info.column === 'varchar' ? (field.length ?? 140) : undefined;
      if (length !== undefined && text.length > length && [...text].length > length)
        throw refuse(`is longer than ${length} characters`);
      return normalized(text);
    }
    case 'integer':
    case 'number': {
      // As the wire's coercion: an empty text is no value.
      if (value === '') return null;
      const n = numberOf(value);
      if (!Number.isFinite(n)) throw refuse(`"${String(value).slice(0, 140)}" is not a number`);
      if (info.value === 'integer' && !Number.isInteger(n)) throw refuse(`${n} is not a whole number`);
      const range = INTEGER_RANGE[info.column];
      if (range && (n < range[0] || n > range[1])) throw refuse(`${n} is outside ${range[0]} to ${range[1]}`);
      if (field.nonNegative && n < 0) throw refuse(`${n} is negative`);
      return normalized(n);
    }
    case 'check': {
      // Frappe's `1 if cint(value) else 0`: a text that is no number is 0.
      const n = numberOf(value);
      return Number.isFinite(n) && Math.trunc(n) !== 0 ? 1 : 0;
    }
    case 'date': {
      // A Datetime's value into a Date field keeps its day, as the database column would.
      const text = String(value);
      return normalized(/^\d{4}-\d{2}-\d{2}[ T]/.test(text) ? text.slice(0, 10) : text);
    }
    case 'datetime':
      return normalized(String(value));
    case 'time': {
      const text = String(value);
      return normalized(/^\d{4}-\d{2}-\d{2}[ T]/.test(text) ? text.slice(11) : text);
    }
    case 'json':
    case 'rows':
    case 'none':
      return value;
    default:
      return assertNever(info.value);
  }
}
