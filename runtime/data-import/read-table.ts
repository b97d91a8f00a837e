// An import file's lines of cells, read by streaming parsers: CSV by csv-parse (UTF-8 checked as it streams, a line
// capped at MAX_ROW_CHARS), XLSX by exceljs's WorkbookReader (first sheet) after a zip-bomb check that inflates every
// entry once with yauzl, counting the real bytes (declared sizes can lie), against MAX_XLSX_INFLATED. exceljs (with
// jszip, unzipper and their polyfills, about 10 MB of heap) is loaded by the first XLSX import, not at start.
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { parse } from 'csv-parse';
import type { CellValue } from 'exceljs';
import yauzl from 'yauzl';
import { MAX_COLUMNS } from '../data-export/template-layout';
import { AppError, DataError } from '../errors/errors';

/** The longest line a CSV may have, in characters (a longer one refuses the file). */
export const MAX_ROW_CHARS = 1 << 20;
/** The most bytes the entries of an XLSX may inflate to, all together. */
export const MAX_XLSX_INFLATED = 256 << 20;
/** The most entries an XLSX may hold. */
const MAX_XLSX_ENTRIES = 10_000;
/** The most lines an import file may have. */
export const MAX_LINES = 1_000_000;
/**
 * The most columns a line may fill (as many as an export template can have): a cell further right refuses the file
 * before any line is laid out, so a small XLSX with one cell in column XFD per row costs no 16,384 cells a row.
 */
export const MAX_CELLS = MAX_COLUMNS;

const tooWide = () => new DataError(`Import file has a line with a cell past column ${MAX_CELLS}`);

/** A cell as read: text, a number, a date (XLSX), or empty. */
export type Cell = string | number | Date | null;

/** The kinds of file an import reads. */
export type TableKind = 'csv' | 'xlsx';

/** The kind of an import file from its name (`.csv`, `.xlsx`); anything else is refused. */
export function tableKindOf(fileName: string): TableKind {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.xlsx')) return 'xlsx';
  throw new DataError('Import file must be a .csv or .xlsx file');
}

/** Passes bytes through as text, refusing any that is not UTF-8 (a Latin-1 or UTF-16 export from a spreadsheet). */
class Utf8Check extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  constructor() {
    super({ decodeStrings: true, readableObjectMode: false });
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      done(null, this.decoder.decode(chunk, { stream: true }));
    } catch {
      done(new DataError('Import file is not UTF-8 text: save it as "CSV UTF-8" and upload it again'));
    }
  }
  override _flush(done: TransformCallback): void {
    try {
      done(null, this.decoder.decode());
    } catch {
      done(new DataError('Import file is not UTF-8 text: save it as "CSV UTF-8" and upload it again'));
    }
  }
}

/** A parser's error as the import reports it: ours as they are, csv-parse's with its message. */
function csvError(err: unknown): Error {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'CSV_MAX_RECORD_SIZE')
    return new DataError(`Import file has a line longer than ${MAX_ROW_CHARS} characters`);
  return new DataError(`Import file is not valid CSV: ${String((err as Error).message).slice(0, 200)}`);
}

async function* csvLines(bytes: Readable): AsyncIterable<Cell[]> {
  const parser = parse({
    bom: true,
    max_record_size: MAX_ROW_CHARS,
    relax_column_count: true,
    skip_empty_lines: true,
  });
  const check = new Utf8Check();
  bytes.on('error', (err) => check.destroy(err));
  check.on('error', (err) => parser.destroy(err));
  bytes.pipe(check).pipe(parser);
  try {
    for await (const record of parser) {
      const cells = record as string[];
      if (cells.length > MAX_CELLS) {
        if (cells.slice(MAX_CELLS).some((c) => c !== '')) throw tooWide();
        cells.length = MAX_CELLS;
      }
      yield cells.map((c) => (c === '' ? null : c));
    }
  } catch (err) {
    throw csvError(err);
  } finally {
    bytes.destroy();
  }
}

/** Refuses an XLSX whose entries would inflate past MAX_XLSX_INFLATED (or that is not a zip at all). */
export async function checkZipBomb(file: Buffer): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(file, { lazyEntries: true, validateEntrySizes: true }, (err, z) =>
        err ? reject(err) : resolve(z),
      ),
    );
  } catch {
    throw new DataError('Import file is not a valid XLSX file');
  }
  if (zip.entryCount > MAX_XLSX_ENTRIES) throw new DataError('XLSX file has too many parts');
  let inflated = 0;
  const tooBig = () =>
    new DataError(`XLSX file inflates to more than ${MAX_XLSX_INFLATED >> 20} MB: refused (a zip bomb?)`);
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        if (inflated + entry.uncompressedSize > MAX_XLSX_INFLATED) return reject(tooBig());
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(err);
          stream.on('data', (chunk: Buffer) => {
            inflated += chunk.length;
            if (inflated > MAX_XLSX_INFLATED) {
              stream.destroy();
              reject(tooBig());
            }
          });
          // yauzl checks each part's real size against the declared one: a lie is how a bomb hides.
          stream.on('error', () =>
            reject(new DataError('XLSX file has parts larger than it declares: refused (a zip bomb?)')),
          );
          stream.on('end', () => zip.readEntry());
        });
      });
      zip.readEntry();
    });
  } catch (err) {
    throw err instanceof AppError ? err : new DataError('Import file is not a valid XLSX file');
  } finally {
    zip.close();
  }
}

/** The value of an exceljs cell: formulas give their cached result, rich text its plain text. */
function xlsxCell(value: CellValue): Cell {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string' || typeof value === 'number' || value instanceof Date) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'object') {
    if ('formula' in value || 'sharedFormula' in value)
      throw new DataError('XLSX cell holds a formula: paste its values instead');
    if ('richText' in value) return value.richText.map((r) => r.text).join('');
    if ('text' in value) return String(value.text);
    if ('error' in value) return null;
  }
  return String(value);
}

async function* xlsxLines(file: Buffer): AsyncIterable<Cell[]> {
  await checkZipBomb(file);
  const ExcelJS = require('exceljs') as typeof import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([file]), {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    entries: 'ignore',
  });
  try {
    for await (const sheet of reader) {
      for await (const row of sheet) {
        // The cells the row holds (exceljs's `values` would be as long as its right-most cell's column).
        const cells: Cell[] = [];
        let filled = false;
        row.eachCell((cell, col) => {
          const value = xlsxCell(cell.value);
          if (value === null) return;
          if (col > MAX_CELLS) throw tooWide();
          while (cells.length < col - 1) cells.push(null);
          cells.push(value);
          filled = true;
        });
        if (filled) yield cells;
      }
      return;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new DataError(
      `Import file is not a valid XLSX file: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}

/** The lines of an import file (CSV as a stream; XLSX as its bytes), at most MAX_LINES. */
export async function* readLines(kind: TableKind, source: Readable | Buffer): AsyncIterable<Cell[]> {
  const lines =
    kind === 'csv'
      ? csvLines(Buffer.isBuffer(source) ? Readable.from([source]) : source)
      : xlsxLines(Buffer.isBuffer(source) ? source : await bufferOf(source));
  let n = 0;
  for await (const line of lines) {
    if (++n > MAX_LINES) throw new DataError(`Import file has more than ${MAX_LINES} lines`);
    yield line;
  }
}

async function bufferOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
