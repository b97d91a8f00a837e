// GET /api/v2/document/{doctype}/export: the documents of a list query streamed as CSV, XLSX or JSON; the query is
// parsed and its first page read before the status line, so a refused query is an ordinary JSON error.
import { exportSource } from '../data-export/export-pages';
import { CONTENT_TYPES, exportFormat, exportStream } from '../data-export/export-stream';
import { callerOf } from '../http/caller-of';
import { requestParams } from '../http/params';
import type { AppContext } from '../http/state';
import type { RouteParams, RouteRow } from '../http/route-row';

/** Streams the export of `p.doctype` in `?format=` (csv by default). */
export async function exportDocuments(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const params = requestParams(ctx);
  const format = exportFormat(params.format);
  const source = await exportSource(callerOf(ctx), p.doctype, params);
  ctx.status = row.status;
  ctx.type = CONTENT_TYPES[format];
  ctx.set('Content-Disposition', `attachment; filename="${source.layout.binding.meta.slug}.${format}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = exportStream(source, format);
}
