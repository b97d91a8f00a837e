// An import file read into its layout and documents (each with its line numbers and what is wrong with it), checked
// against the DocType before anything is written: unknown columns, bad encodings and oversized files fail here.
import type { Readable } from 'node:stream';
import type { TemplateLayout } from '../data-export/template-layout';
import { DataError } from '../errors/errors';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { countDocuments, importDocuments, importLayout, type ImportDocument } from './import-documents';
import { readLines, type Cell, type TableKind } from './read-table';

/** The file's layout (from its header row) and its lines after the header. */
async function openTable(
  site: Site,
  binding: DocTypeBinding,
  kind: TableKind,
  source: Readable | Buffer,
): Promise<{ layout: TemplateLayout; rest: AsyncIterable<Cell[]> }> {
  const lines = readLines(kind, source)[Symbol.asyncIterator]();
  const head = await lines.next();
  if (head.done) throw new DataError('Import file is empty');
  return { layout: importLayout(site, binding, head.value), rest: { [Symbol.asyncIterator]: () => lines } };
}

/**
 * The file's layout and its documents as they are read, one at a time: a preview or an import keeps what it needs of
 * each document, not the file (a 20 MB CSV read whole into its documents held about 750 MB).
 */
export async function streamImport(
  site: Site,
  binding: DocTypeBinding,
  kind: TableKind,
  source: Readable | Buffer,
): Promise<{ layout: TemplateLayout; documents: AsyncIterable<ImportDocument> }> {
  const { layout, rest } = await openTable(site, binding, kind, source);
  return { layout, documents: importDocuments(layout, rest) };
}

/**
 * Reads the whole file as streamImport does, refusing it for the same reasons, and counts its documents without
 * reading cells' values (a bad cell fails its document in the job): the check before an import is queued.
 */
export async function checkImportFile(
  site: Site,
  binding: DocTypeBinding,
  kind: TableKind,
  source: Readable | Buffer,
): Promise<number> {
  const { layout, rest } = await openTable(site, binding, kind, source);
  return countDocuments(layout, rest);
}
