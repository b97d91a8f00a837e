// Documents as the API returns them: `doctype` added, Password values never sent, nulls dropped in v1 and kept in v2.
import { isTableType } from '../meta/field-types';
import { copyValue } from './copy-value';
import type { DocTypeBinding, Registry } from '../registry/registry';
import type { DocData } from '../db/row-store';

const HIDDEN_STANDARD = new Set(['__islocal', '__unsaved']);

/** Serializes document data of a DocType for API version `version`: a new object sharing nothing changeable with `data`. */
export function serializeDoc(
  binding: DocTypeBinding,
  registry: Registry,
  data: DocData,
  version: 1 | 2,
): DocData {
  const { meta, fieldMap: fields } = binding;
  const out: DocData = {};
  // Keys, not Object.entries: a [key, value] pair per field was most of what serializing a document allocated.
  for (const key of Object.keys(data)) {
    if (HIDDEN_STANDARD.has(key)) continue;
    const value = data[key];
    const field = fields.get(key);
    if (field?.fieldtype === 'Password') continue;
    if (field && isTableType(field.fieldtype)) {
      const child = field.options ? registry.get(field.options) : undefined;
      const rows = Array.isArray(value) ? (value as DocData[]) : [];
      out[key] = child ? rows.map((row) => serializeDoc(child, registry, row, version)) : copyValue(rows);
      continue;
    }
    if (version === 1 && (value === null || value === undefined)) continue;
    // A JSON value is copied too: the answer shares nothing with `data` (GET one serializes the remembered document).
    out[key] = value === undefined ? null : typeof value === 'object' ? copyValue(value) : value;
  }
  if (version === 2) {
    for (const field of meta.fields) {
      if (!(field.fieldname in out) && field.fieldtype !== 'Password')
        out[field.fieldname] = isTableType(field.fieldtype) ? [] : null;
    }
  }
  out.doctype = meta.name;
  return out;
}
