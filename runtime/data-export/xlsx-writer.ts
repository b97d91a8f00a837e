// A one-sheet XLSX workbook written as a stream: the sheet's XML comes from an async iterable of lines and is zipped by
// archiver as it is pulled, so the zip's own backpressure paces the export and memory stays flat whatever the row
// count. exceljs's streaming WorkbookWriter is not used here: its sheet buffer does not wait for the compressor, so a
// 400,000-row export held 170 MB of pending XML (bench/data-io.ts). Strings are inline (no shared-string table to keep).
// archiver (with readdir-glob, lazystream and its own readable-stream) is loaded by the first XLSX export, not at start.
import { Readable } from 'node:stream';

/** One cell: text, a number, or empty. */
export type XlsxCell = string | number | null;

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`;

const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

const WORKBOOK_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`;

const SHEET_START = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`;

const SHEET_END = '</sheetData></worksheet>';

function workbookXml(sheetName: string): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="${escapeXml(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`;
}

/** Characters XML 1.0 cannot hold at all (control characters but tab, line feed and carriage return; lone surrogates). */
const NOT_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// A carriage return as a character reference: XML readers turn a literal one (and CR LF) into a line feed.
const XML_SPECIAL = /[&<>"\r]/g;
const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\r': '&#13;',
};

/** Text as XML character data: markup characters escaped, characters XML cannot carry dropped. */
export function escapeXml(text: string): string {
  return text.replace(NOT_XML, '').replace(XML_SPECIAL, (c) => ENTITIES[c] as string);
}

/** The column letters of a 0-based column index: 0 → A, 25 → Z, 26 → AA. */
export function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** One `<row>` of the sheet (1-based `number`); empty cells are left out. */
export function rowXml(number: number, cells: readonly XlsxCell[], columns: readonly string[]): string {
  let xml = `<row r="${number}">`;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (cell === null || cell === undefined || cell === '') continue;
    const ref = `${columns[i] ?? columnName(i)}${number}`;
    if (typeof cell === 'number' && Number.isFinite(cell)) xml += `<c r="${ref}"><v>${cell}</v></c>`;
    else {
      const text = escapeXml(String(cell));
      const space = text.trim() === text ? '' : ' xml:space="preserve"';
      xml += `<c r="${ref}" t="inlineStr"><is><t${space}>${text}</t></is></c>`;
    }
  }
  return `${xml}</row>`;
}

async function* sheetXml(lines: AsyncIterable<readonly XlsxCell[][]>): AsyncIterable<string> {
  yield SHEET_START;
  const columns: string[] = [];
  let number = 0;
  for await (const page of lines) {
    let xml = '';
    for (const cells of page) {
      while (columns.length < cells.length) columns.push(columnName(columns.length));
      xml += rowXml(++number, cells, columns);
    }
    if (xml) yield xml;
  }
  yield SHEET_END;
}

/**
 * The workbook of one sheet named `sheetName` whose rows are `pages` of lines, as a byte stream. The pages are read
 * only as fast as the zip is read; an error while reading them destroys the stream with it.
 */
export function xlsxWorkbook(sheetName: string, pages: AsyncIterable<readonly XlsxCell[][]>): Readable {
  const archiver = require('archiver') as typeof import('archiver');
  const zip = archiver('zip', { zlib: { level: 6 } });
  const sheet = Readable.from(sheetXml(pages));
  sheet.once('error', (err) => zip.destroy(err));
  // A reader gone (a client that hung up) stops the pages: the source's generator is returned, its query ends.
  zip.once('close', () => sheet.destroy());
  zip.append(CONTENT_TYPES, { name: '[Content_Types].xml' });
  zip.append(ROOT_RELS, { name: '_rels/.rels' });
  zip.append(workbookXml(sheetName), { name: 'xl/workbook.xml' });
  zip.append(WORKBOOK_RELS, { name: 'xl/_rels/workbook.xml.rels' });
  zip.append(sheet, { name: 'xl/worksheets/sheet1.xml' });
  void zip
    .finalize()
    .catch((err: unknown) => zip.destroy(err instanceof Error ? err : new Error(String(err))));
  return zip;
}
