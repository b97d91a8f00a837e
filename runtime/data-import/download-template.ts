// download_template(doctype, export_fields?, export_records?, export_filters?, file_type?): the import template of a
// DocType as CSV or Excel: the header row of the template layout, then no documents (`blank_template`, the default),
// the first five (`5_records`), every one the user may read (`all`) or those matching `export_filters` (`by_filter`).
import { Readable } from 'node:stream';
import { exportSource, type ExportSource } from '../data-export/export-pages';
import { CONTENT_TYPES, exportStream, type ExportFormat } from '../data-export/export-stream';
import type { DocData } from '../db/row-store';
import { DataError, ValidationError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import { jsonParam, requestParams } from '../http/params';
import type { AppContext } from '../http/state';

const RECORDS = ['blank_template', '5_records', 'all', 'by_filter'] as const;

/** Frappe's `export_fields` (`{DocType: [fields], <table field>: [fields]}`) or a list of template column keys. */
function columnKeys(doctype: string, raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (Array.isArray(raw)) return raw as string[];
  if (typeof raw !== 'object') throw new DataError('export_fields must be a list or an object of lists');
  const keys: string[] = [];
  for (const [group, fields] of Object.entries(raw as Record<string, unknown>)) {
    if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string'))
      throw new DataError('export_fields must map each DocType or table field to a list of field names');
    for (const f of fields as string[]) keys.push(group === doctype ? f : `${group}.${f}`);
  }
  return keys;
}

/** The first `n` documents of a source's pages. */
async function* firstDocuments(pages: AsyncIterable<DocData[]>, n: number): AsyncIterable<DocData[]> {
  if (n === 0) return;
  for await (const page of pages) {
    yield page.slice(0, n);
    n -= page.length;
    if (n <= 0) return;
  }
}

/** Answers the template file. */
export async function downloadTemplate(ctx: AppContext): Promise<unknown> {
  const params = requestParams(ctx);
  const doctype = params.doctype;
  if (typeof doctype !== 'string' || doctype === '') throw new ValidationError('doctype is required');
  const records = params.export_records ?? 'blank_template';
  if (!(RECORDS as readonly unknown[]).includes(records))
    throw new DataError(`export_records must be one of ${RECORDS.join(', ')}`);
  const fileType = params.file_type ?? 'CSV';
  if (fileType !== 'CSV' && fileType !== 'Excel') throw new DataError('file_type must be CSV or Excel');
  const format: ExportFormat = fileType === 'CSV' ? 'csv' : 'xlsx';
  const keys = columnKeys(doctype, jsonParam(params, 'export_fields'));
  const query: Record<string, unknown> = keys ? { fields: JSON.stringify(keys) } : {};
  if (records === 'by_filter' && params.export_filters !== undefined) query.filters = params.export_filters;
  const source = await exportSource(callerOf(ctx), doctype, query, records !== 'blank_template');
  const limit = records === 'blank_template' ? 0 : records === '5_records' ? 5 : Infinity;
  const limited: ExportSource = { layout: source.layout, pages: firstDocuments(source.pages, limit) };
  ctx.status = 200;
  ctx.type = CONTENT_TYPES[format];
  ctx.set('Content-Disposition', `attachment; filename="${source.layout.binding.meta.slug}.${format}"`);
  const body: Readable = exportStream(limited, format);
  ctx.body = body;
  return undefined;
}
