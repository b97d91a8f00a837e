// Checks on a document body as the client sent it, before it meets the stored document: at most `max_child_rows`
// rows per document (site config), and no value at all for a field the caller may not read.
import type { Caller } from '../document/caller';
import type { DocData } from '../db/row-store';
import { RequestEntityTooLargeError } from '../errors/errors';
import { isTableType } from '../meta/field-types';
import { refuseUnreadableFields } from '../permissions/field-levels';
import type { DocTypeBinding } from '../registry/registry';

/** Throws 413 when the body's child tables hold more than `max` rows together. */
export function checkChildRowCount(binding: DocTypeBinding, body: DocData, max: number): void {
  let rows = 0;
  for (const field of binding.meta.fields) {
    if (!isTableType(field.fieldtype)) continue;
    const value = body[field.fieldname];
    if (Array.isArray(value)) rows += value.length;
  }
  if (rows > max)
    throw new RequestEntityTooLargeError(
      `A ${binding.meta.name} may have at most ${max} child rows (max_child_rows); the request has ${rows}`,
    );
}

/** The checks every create, update and document-method body passes before it is merged into a document. */
export function checkClientBody(caller: Caller, binding: DocTypeBinding, body: DocData): void {
  checkChildRowCount(binding, body, caller.site.config.site.max_child_rows);
  refuseUnreadableFields(caller.user, binding, caller.site.registry, body);
}
