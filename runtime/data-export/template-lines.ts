// A document as lines of the template layout, each cell a string (CSV) or a value (XLSX): the document's own cells on
// its first line, child row i of every table on line i, and text that a spreadsheet would run as a formula escaped.
import type { DocData } from '../db/row-store';
import type { TemplateLayout } from './template-layout';

/**
 * The first characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection list), after any `'`:
 * text that already begins `'=` gets one more, so the importer's removal of one gives it back as it was.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;

/** Text a spreadsheet would run as a formula, prefixed with `'` so it reads as text; other text as it is. */
export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** A cell's value: numbers stay numbers, objects become JSON text, text is escaped; null and undefined are empty. */
export function cellOf(value: unknown): string | number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') return escapeFormula(value);
  return escapeFormula(JSON.stringify(value));
}

/** The lines of one document (child rows already nested under their Table fields). */
export function documentLines(layout: TemplateLayout, doc: DocData): (string | number | null)[][] {
  let count = 1;
  for (const { tableField } of layout.tables) {
    const rows = doc[tableField];
    if (Array.isArray(rows)) count = Math.max(count, rows.length);
  }
  const lines: (string | number | null)[][] = [];
  for (let i = 0; i < count; i++) {
    lines.push(
      layout.columns.map((column) => {
        if (column.table === undefined) return i === 0 ? cellOf(doc[column.field]) : null;
        const rows = doc[column.table];
        const row = Array.isArray(rows) ? (rows[i] as Record<string, unknown> | undefined) : undefined;
        return row ? cellOf(row[column.field]) : null;
      }),
    );
  }
  return lines;
}
