// The documents of an export, page after page through the list operation (its parsing, permissions, permlevels and
// row restrictions) with keyset paging: each page starts after the last row of the one before, so memory holds one
// page whatever the row count, and rows written meanwhile neither repeat nor shift the pages.
import type { Caller } from '../document/caller';
import type { DocData } from '../db/row-store';
import type { DocTypeBinding } from '../registry/registry';
import { DataError } from '../errors/errors';
import { jsonParam } from '../http/params';
import { listDocuments } from '../operations/list-operations';
import { logger } from '../log/logger';
import { holdsBulkRight, refusal } from '../permissions/doctype-permission';
import { queryAccess } from '../permissions/query-access';
import { bindingFor } from '../operations/doctype-binding';
import { defaultColumnKeys, layoutOf, type TemplateLayout } from './template-layout';

/** Rows per page read (the site's `max_page_length` caps it). */
const PAGE_ROWS = 1000;

/** An export's layout and its pages of documents (child rows nested under their Table fields). */
export interface ExportSource {
  layout: TemplateLayout;
  pages: AsyncIterable<DocData[]>;
}

/** The columns asked for: `fields` as a JSON list (or comma-separated) of `field` / `<table>.<field>`, else all. */
function requestedKeys(params: Record<string, unknown>): string[] | undefined {
  const raw = jsonParam(params, 'fields');
  if (raw === undefined || raw === null || raw === '') return undefined;
  const list = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()) : raw;
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string' && v !== ''))
    throw new DataError("'fields' must be a list of field names or <table>.<field> names");
  return list as string[];
}

/** The list operation's `fields`: the document's own columns, then one child selection per table. */
function listFields(layout: TemplateLayout): unknown[] {
  const own = layout.columns.filter((c) => c.table === undefined).map((c) => c.field);
  const fields: unknown[] = own.includes('name') ? own : ['name', ...own];
  for (const { tableField } of layout.tables)
    fields.push({
      [tableField]: layout.columns.filter((c) => c.table === tableField).map((c) => c.field),
    });
  return fields;
}

/** True when the export is narrowed by filters (an audit line tells a whole DocType's export from a selection). */
function hasFilters(params: Record<string, unknown>): boolean {
  return ['filters', 'or_filters'].some((key) => {
    const value = params[key];
    return value !== undefined && value !== null && value !== '' && value !== '[]' && value !== '{}';
  });
}

/**
 * 403 unless the caller may export the DocType's documents, as Frappe's can_export: System Manager always, otherwise
 * a role with the `export` right on every document (an if_owner export row is not enough, as in Frappe's exports).
 */
function assertCanExport(caller: Caller, binding: DocTypeBinding): void {
  const { user } = caller;
  if (holdsBulkRight(user, binding.meta, 'export')) return;
  // A Guest is 401 (docs/auth.md), never 403.
  throw refusal(user, `You are not allowed to export ${binding.meta.name}`);
}

/**
 * Plans an export of `doctype` for the caller from the list parameters (`fields`, `filters`, `or_filters`,
 * `order_by`); the first page is read here, so a refused query fails before anything is sent. `withRows` false (a
 * blank import template) reads the layout alone and needs no `export` right.
 */
export async function exportSource(
  caller: Caller,
  doctype: string,
  params: Record<string, unknown>,
  withRows = true,
): Promise<ExportSource> {
  // The v2 export's operation, whichever version's path asked (v1's download_template).
  const v2: Caller = { ...caller, version: 2 };
  const binding = bindingFor(v2, doctype, 'export');
  if (withRows) {
    assertCanExport(caller, binding);
    // An audit line per export of documents (OWASP API6: a bulk export of a whole DocType leaves a trace).
    logger().info(
      { event: 'export', user: caller.user.name, doctype: binding.meta.name, filtered: hasFilters(params) },
      'documents exported',
    );
  }
  const access = await queryAccess(caller.site, caller.user, binding.meta, 'read');
  const layout = layoutOf(
    caller.site,
    binding,
    requestedKeys(params) ?? defaultColumnKeys(caller.site, binding, access),
  );
  const base: Record<string, unknown> = {
    fields: JSON.stringify(listFields(layout)),
    limit: Math.min(PAGE_ROWS, caller.site.config.site.max_page_length),
  };
  for (const key of ['filters', 'or_filters', 'order_by'])
    if (params[key] !== undefined) base[key] = params[key];
  // Without an order asked for, pages follow the primary key: each starts with an index seek after the last name.
  // (The list's default, `modified desc`, re-sorts every row left at each page: 3,500 rows/s on 50,000 ToDos.)
  base.order_by ??= 'name asc';
  const first = await listDocuments(v2, doctype, { ...base, cursor: '' });
  async function* pages(): AsyncIterable<DocData[]> {
    let page = first;
    for (;;) {
      yield page.data as DocData[];
      if (!page.nextCursor) return;
      page = await listDocuments(v2, doctype, { ...base, cursor: page.nextCursor });
    }
  }
  return { layout, pages: pages() };
}
