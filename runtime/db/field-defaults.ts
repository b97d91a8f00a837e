// The value a field's default stands for when it is taken (`Today`, `Now`, the user): what a new document's fields and a
// never-saved Single's values start from.
import { assertNever } from '../meta/field-types';
import type { FieldMeta } from '../meta/types';
import { defaultOf, type FieldDefault } from '../registry/field-lists';
import { now, today } from './stored-values';

/** The value a default stands for, for `user` now. */
export function resolveDefault(found: FieldDefault, user: string): unknown {
  switch (found.kind) {
    case 'fixed':
      return found.value;
    case 'user':
      return user;
    case 'today':
      return today();
    case 'now':
      return now().slice(0, 19);
    case 'rows':
      return [];
    default:
      return assertNever(found);
  }
}

/** Frappe's default value of a field (`Today`, `Now`, `__user`, Check as 0/1, numbers as numbers). */
export function defaultValue(field: FieldMeta, user: string): unknown {
  const found = defaultOf(field);
  return found && resolveDefault(found, user);
}
