// Frappe's Link search, `frappe.desk.search.search_link` (what a Link field's autocomplete and frappe-react-sdk's
// useSearch call): the documents whose name or one of the DocType's text `search_fields` contains `txt`, through the
// list operation (the caller's read permission and User Permissions apply), as `{value, description}`.
import { DataError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import { intParam, jsonParam, requestParams, textArgument } from '../http/params';
import type { AppContext } from '../http/state';
import type { DocData } from '../db/row-store';
import * as lists from '../operations/list-operations';
import { FIELD_TYPE_INFO } from '../meta/field-types';

/** The most results one search answers (Frappe's page_length has no cap; a list's own limits still apply). */
const MAX_PAGE_LENGTH = 500;

/** One result as Frappe's build_for_autosuggest makes it. */
interface LinkSearchResult {
  value: string;
  description: string;
}

/**
 * `frappe.desk.search.search_link(doctype, txt, filters?, page_length = 10)`: name first, then the search fields, `like
 * %txt%` on any of them (no `txt`: the first documents), in the DocType's sort order. `query` (a custom search method)
 * is not supported: 400 rather than a search it did not ask for.
 */
export async function searchLink(ctx: AppContext): Promise<LinkSearchResult[]> {
  const params = requestParams(ctx);
  const doctype = textArgument(params, 'doctype');
  if (params.query !== undefined && params.query !== null && params.query !== '')
    throw new DataError('Argument query: custom search methods are not supported');
  const txt = params.txt === undefined || params.txt === null ? '' : String(params.txt).trim();
  const pageLength = intParam(params, 'page_length', 10);
  if (pageLength < 1 || pageLength > MAX_PAGE_LENGTH)
    throw new DataError(`Argument page_length: must be between 1 and ${MAX_PAGE_LENGTH}`);
  const binding = ctx.state.site.registry.get(doctype);
  const fields = ['name', ...(binding?.meta.searchFields ?? []).filter((f) => f !== 'name')];
  // `like` compares text: a number or date search field is shown in the description, not matched.
  const matched = fields.filter((f) => {
    const field = binding?.fieldMap.get(f);
    return !field || FIELD_TYPE_INFO[field.fieldtype].value === 'string';
  });
  const filters = jsonParam(params, 'filters');
  const rows = (
    await lists.listDocuments({ ...callerOf(ctx), version: 1 }, doctype, {
      fields,
      ...(filters === undefined || filters === null || filters === '' ? {} : { filters }),
      ...(txt ? { or_filters: matched.map((f) => [f, 'like', `%${txt}%`]) } : {}),
      limit_page_length: pageLength,
      as_dict: true,
    })
  ).data as DocData[];
  return rows.map((row) => ({
    value: String(row.name),
    description: [
      ...new Set(
        fields
          .slice(1)
          .map((f) => row[f])
          .filter((v) => v !== null && v !== undefined && v !== '')
          .map(String),
      ),
    ].join(', '),
  }));
}
