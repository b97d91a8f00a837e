// An import file read into its layout and documents (each with its line numbers and what is wrong with it), checked
// against the DocType before anything is written: unknown columns, bad encodings and oversized files fail here.
import type { Readable } from 'node:stream';
import type { TemplateLayout } from '../data-export/template-layout';
import { DataError } from '../errors/errors';
import type { DocTypeBinding } from '../registry/registry';
import type { Site } from '../site';
import { importDocuments, importLayout, type ImportDocument } from './import-documents';
import { readLines, type Cell, type TableKind } from './read-table';

/** An import file, parsed. */
export interface ImportPlan {
  layout: TemplateLayout;
  documents: ImportDocument[];
}

/** Reads the file (`kind`) into the documents of `binding`. */
export async function planImport(
  site: Site,
  binding: DocTypeBinding,
  kind: TableKind,
  source: Readable | Buffer,
): Promise<ImportPlan> {
  const lines = readLines(kind, source)[Symbol.asyncIterator]();
  const head = await lines.next();
  if (head.done) throw new DataError('Import file is empty');
  const layout = importLayout(site, binding, head.value);
  const rest: AsyncIterable<Cell[]> = { [Symbol.asyncIterator]: () => lines };
  const documents: ImportDocument[] = [];
  for await (const doc of importDocuments(layout, rest)) documents.push(doc);
  return { layout, documents };
}
