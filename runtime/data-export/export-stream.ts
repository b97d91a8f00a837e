// An export as a byte stream in CSV (RFC 4180, written here: csv-stringify took half of a 100,000-row export's time),
// XLSX (xlsx-writer.ts: one sheet of inline strings zipped as it is read) or JSON (the documents with
// nested child rows). Each waits for the reader between pages, so a slow client holds one page, never the export.
import { Readable } from 'node:stream';
import { DataError } from '../errors/errors';
import type { ExportSource } from './export-pages';
import { documentLines } from './template-lines';
import { type XlsxCell, xlsxWorkbook } from './xlsx-writer';

/** The formats an export is written in. */
export const EXPORT_FORMATS = ['csv', 'xlsx', 'json'] as const;

/** One export format. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The content type of each format. */
export const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  json: 'application/json; charset=utf-8',
};

/** The `format` parameter (default csv); anything else is a 400. */
export function exportFormat(raw: unknown): ExportFormat {
  if (raw === undefined || raw === null || raw === '') return 'csv';
  if (typeof raw === 'string' && (EXPORT_FORMATS as readonly string[]).includes(raw))
    return raw as ExportFormat;
  throw new DataError('format must be one of csv, xlsx, json');
}

/** Called after each page with the number of documents written so far. */
export type ExportProgress = (documents: number) => void;

// `;` too: a spreadsheet whose list separator is `;` would split `x;=HYPERLINK(…)` into a cell that runs as a formula.
const NEEDS_QUOTES = /[",;\r\n]/;

/** One CSV line (RFC 4180: a cell with a comma, a quote or a line break is quoted, its quotes doubled). */
export function csvLine(cells: readonly (string | number | null)[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (i > 0) line += ',';
    if (cell === null || cell === undefined) continue;
    const text = typeof cell === 'number' ? String(cell) : cell;
    line += NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }
  return `${line}\n`;
}

async function* csvChunks(source: ExportSource, progress?: ExportProgress): AsyncIterable<string> {
  const { layout } = source;
  yield `\ufeff${csvLine(layout.columns.map((c) => c.key))}`;
  let n = 0;
  for await (const page of source.pages) {
    let text = '';
    for (const doc of page) for (const line of documentLines(layout, doc)) text += csvLine(line);
    n += page.length;
    progress?.(n);
    if (text) yield text;
  }
}

async function* jsonChunks(source: ExportSource, progress?: ExportProgress): AsyncIterable<string> {
  let n = 0;
  yield '[';
  for await (const page of source.pages) {
    if (page.length) yield (n ? ',' : '') + page.map((doc) => JSON.stringify(doc)).join(',');
    n += page.length;
    progress?.(n);
  }
  yield ']\n';
}

async function* xlsxPages(source: ExportSource, progress?: ExportProgress): AsyncIterable<XlsxCell[][]> {
  yield [source.layout.columns.map((c) => c.key)];
  let n = 0;
  for await (const page of source.pages) {
    const lines: XlsxCell[][] = [];
    for (const doc of page) for (const line of documentLines(source.layout, doc)) lines.push(line);
    n += page.length;
    progress?.(n);
    yield lines;
  }
}

/** The export as a stream of bytes in `format`. */
export function exportStream(
  source: ExportSource,
  format: ExportFormat,
  progress?: ExportProgress,
): Readable {
  switch (format) {
    case 'csv':
      return Readable.from(csvChunks(source, progress));
    case 'json':
      return Readable.from(jsonChunks(source, progress));
    case 'xlsx':
      return xlsxWorkbook(source.layout.binding.meta.name.slice(0, 31), xlsxPages(source, progress));
  }
}
