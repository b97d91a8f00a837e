// The documents of an import file in the template layout (runtime/data-export/template-layout.ts): the header row
// names the columns (fieldnames, `<table>.<field>`, or Frappe's labels: `ID`, `Label`, `Label (Table Label)`); a line
// whose own cells are all empty continues the document above with more child rows. Cells become field values by the
// field's type; a cell a spreadsheet would run as a formula is refused unless escaped with a leading `'`.
import { clipKey, layoutOf, type TemplateColumn, type TemplateLayout } from '../data-export/template-layout';
import { DataError } from '../errors/errors';
import { assertNever, isTableType } from '../meta/field-types';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import type { Cell } from './read-table';

/** One document of the file: its line numbers (1 is the header), its field values, and what is wrong with it. */
export interface ImportDocument {
  lines: number[];
  doc: Record<string, unknown>;
  errors: string[];
}

/** The column key each header cell names: a key as it is, or a label of the DocType's or of one of its tables'. */
function headerKeys(site: Site, binding: DocTypeBinding, header: readonly Cell[]): string[] {
  const byLabel = new Map<string, string>([['id', 'name']]);
  for (const f of binding.meta.fields) {
    byLabel.set(f.label.toLowerCase(), f.fieldname);
    const child = isTableType(f.fieldtype) && f.options ? site.registry.get(f.options) : undefined;
    if (!child) continue;
    byLabel.set(`id (${f.label.toLowerCase()})`, `${f.fieldname}.name`);
    for (const c of child.meta.fields)
      byLabel.set(`${c.label.toLowerCase()} (${f.label.toLowerCase()})`, `${f.fieldname}.${c.fieldname}`);
  }
  const unknown: string[] = [];
  const keys = header.map((cell, i) => {
    const text = cell === null ? '' : String(cell).trim();
    if (text === '') {
      unknown.push(`(column ${i + 1} has no header)`);
      return '';
    }
    const dot = text.indexOf('.');
    const isKey =
      text === 'name' ||
      binding.fieldMap.has(text) ||
      (dot > 0 && binding.fieldMap.get(text.slice(0, dot))?.fieldtype.startsWith('Table') === true);
    const key = isKey ? text : byLabel.get(text.toLowerCase());
    if (key === undefined) unknown.push(clipKey(text));
    return key ?? '';
  });
  if (unknown.length)
    throw new DataError(
      `Unknown columns for ${binding.meta.name}: ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ', …' : ''}`,
    );
  return keys;
}

/** The layout the header row of an import file names. */
export function importLayout(site: Site, binding: DocTypeBinding, header: readonly Cell[]): TemplateLayout {
  return layoutOf(site, binding, headerKeys(site, binding, header));
}

/**
 * Text a spreadsheet would run: a start of `=`, `@`, a tab or a carriage return, or a sign that does not begin a
 * number or phone number (`-2`, `+49 30 1234`) or a list item (`- milk`, with nothing after it a formula needs).
 */
const FORMULA = /^(?:[=@\t\r]|[+-](?![\d.(][\d\s.,()/-]*$| [^=+\-@|!\t\r]*$))/;
/** Text escaped by an export: one `'` (or more, for text that began with them) before a formula start; one is removed. */
const ESCAPED = /^'+[=+\-@\t\r]/;
/** A number as decimal text (thousands commas already removed): not `0x10`, `0b1`, `Infinity` or an empty cell. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const isoDate = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
const isoTime = (d: Date) => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/** A cell as the value of a field of `column`'s kind; throws a message for the row's log. */
function valueOf(column: TemplateColumn, cell: string | number | Date): unknown {
  if (typeof cell === 'string') {
    if (ESCAPED.test(cell)) cell = cell.slice(1);
    else if (column.value === 'string' || column.value === 'json') {
      if (FORMULA.test(cell))
        throw new Error(
          `${column.key}: ${clipKey(cell.slice(0, 20))} would run as a spreadsheet formula; start it with ' to import it as text`,
        );
    }
  }
  const kind = column.value;
  switch (kind) {
    case 'string':
      return cell instanceof Date ? `${isoDate(cell)} ${isoTime(cell)}` : String(cell);
    case 'integer':
    case 'number': {
      const text = typeof cell === 'number' ? '' : String(cell).trim().replace(/,/g, '');
      const n = typeof cell === 'number' ? cell : DECIMAL.test(text) ? Number(text) : NaN;
      if (cell instanceof Date || !Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n)))
        throw new Error(`${column.key}: ${clipKey(String(cell).slice(0, 40))} is not a number`);
      return n;
    }
    case 'check': {
      const text = String(cell).trim().toLowerCase();
      if (['1', 'true', 'yes'].includes(text)) return 1;
      if (['0', 'false', 'no'].includes(text)) return 0;
      throw new Error(`${column.key}: ${clipKey(text.slice(0, 40))} is not 0 or 1`);
    }
    case 'date':
      return cell instanceof Date ? isoDate(cell) : String(cell).trim();
    case 'datetime':
      return cell instanceof Date ? `${isoDate(cell)} ${isoTime(cell)}` : String(cell).trim();
    case 'time':
      return cell instanceof Date ? isoTime(cell) : String(cell).trim();
    case 'json':
      try {
        return JSON.parse(String(cell)) as unknown;
      } catch {
        throw new Error(`${column.key}: not valid JSON`);
      }
    case 'rows':
    case 'none':
      throw new Error(`${column.key}: not a data field`);
    default:
      return assertNever(kind);
  }
}

/** How a line joins the documents: more child rows of the one above, a new one, or a new one with too many cells. */
type LineKind = 'continues' | 'starts' | 'overflows';

/** Reads lines' kinds for `layout`: a line whose own (non-child) cells are all empty continues the document above. */
function lineKinds(layout: TemplateLayout): (cells: readonly Cell[], afterDocument: boolean) => LineKind {
  const own = layout.columns.map((c, i) => (c.table === undefined ? i : -1)).filter((i) => i >= 0);
  const width = layout.columns.length;
  return (cells, afterDocument) => {
    if (cells.length > width && cells.slice(width).some((c) => c !== null)) return 'overflows';
    return afterDocument && own.every((i) => cells[i] === null || cells[i] === undefined)
      ? 'continues'
      : 'starts';
  };
}

/** How many documents the lines after the header hold (importDocuments' grouping, without reading cells' values). */
export async function countDocuments(layout: TemplateLayout, lines: AsyncIterable<Cell[]>): Promise<number> {
  const kindOf = lineKinds(layout);
  let count = 0;
  for await (const cells of lines) if (kindOf(cells, count > 0) !== 'continues') count++;
  return count;
}

/** Groups the lines after the header into documents; `first` is the file line number of the first of them. */
export async function* importDocuments(
  layout: TemplateLayout,
  lines: AsyncIterable<Cell[]>,
  first = 2,
): AsyncIterable<ImportDocument> {
  const kindOf = lineKinds(layout);
  let current: ImportDocument | undefined;
  let lineNo = first - 1;
  for await (const cells of lines) {
    lineNo++;
    const kind = kindOf(cells, current !== undefined);
    if (kind === 'overflows') {
      if (current) yield current;
      current = { lines: [lineNo], doc: {}, errors: ['more cells than the header has columns'] };
      continue;
    }
    if (kind === 'starts') {
      if (current) yield current;
      current = { lines: [], doc: {}, errors: [] };
    }
    const target = current as ImportDocument;
    target.lines.push(lineNo);
    const childRows = new Map<string, Record<string, unknown>>();
    layout.columns.forEach((column, i) => {
      const cell = cells[i];
      if (cell === null || cell === undefined || (typeof cell === 'string' && cell.trim() === '')) return;
      let value: unknown;
      try {
        value = valueOf(column, cell);
      } catch (err) {
        target.errors.push(`line ${lineNo}: ${(err as Error).message}`);
        return;
      }
      if (column.table === undefined) target.doc[column.field] = value;
      else {
        const row = childRows.get(column.table) ?? {};
        row[column.field] = value;
        childRows.set(column.table, row);
      }
    });
    for (const [table, row] of childRows) {
      const rows = (target.doc[table] as Record<string, unknown>[] | undefined) ?? [];
      rows.push(row);
      target.doc[table] = rows;
    }
  }
  if (current) yield current;
}
