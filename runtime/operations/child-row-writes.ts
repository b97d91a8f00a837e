// Writes of a child table's row by name (Frappe's has_child_permission): a row is changed, added or removed by saving
// its parent document with the parent's write permission, so the parent's hooks, checks, events and versions run as
// for any save of it. child-rows.ts finds the row and its parent; document-operations.ts dispatches to these.
import type { Knex } from 'knex';
import type { Caller } from '../document/caller';
import { checkBody } from '../document/checks';
import type { DocData, Queryable } from '../db/row-store';
import { formatDatetime } from '../db/stored-values';
import { TimestampMismatchError } from '../errors/errors';
import { CHILD_FIELDS, STANDARD_FIELDS } from '../meta/types';
import { clip } from '../query/tokenize';
import type { DocTypeBinding } from '../registry/registry';
import { assertSomeParentRight, placeForNew, placeOf, rowNamed, type RowPlace } from './child-rows';
import { checkChildRowCount, checkClientBody } from './client-body';
import { answer, transactionFor, type InTransaction, type Written, type WrittenRow } from './write-answer';

/** Fields a row body never sets: its parent and position are the parent's to give, its stamps the save's. */
const ROW_SET_BY_SAVE = [...STANDARD_FIELDS, ...CHILD_FIELDS, 'doctype'];

/** A child row's body checked as the parent's rows are: the row's fields only, none the caller may not read. */
function rowBody(caller: Caller, child: DocTypeBinding, place: RowPlace, body: DocData): DocData {
  const input = { ...body };
  for (const key of ROW_SET_BY_SAVE) delete input[key];
  const values = checkBody(child.validateBody, input, child.meta.name);
  for (const key of ROW_SET_BY_SAVE) delete values[key];
  checkClientBody(caller, place.parent, { [place.parentfield]: [values] });
  return values;
}

/**
 * Saves the parent of a child row after `edit` changed its rows, in the write's transaction with the parent locked.
 * `edit` answers the written row's name, or its position when it is new (the save names it).
 */
async function saveParentOf(
  caller: Caller,
  child: DocTypeBinding,
  locate: (q: Queryable) => Promise<RowPlace> | RowPlace,
  edit: (rows: DocData[], place: RowPlace) => string | number,
  inTransaction?: InTransaction,
): Promise<Written> {
  const tx = transactionFor(caller);
  let row: WrittenRow | undefined;
  const doc = await tx.runRetryingDeadlock(async () => {
    const place = await locate(tx.trx as Knex);
    const parent = await tx.getDoc(place.parent.meta.name, place.parentName, { forUpdate: true });
    const rows = [...((parent[place.parentfield] as DocData[] | null | undefined) ?? [])];
    const written = edit(rows, place);
    parent[place.parentfield] = rows;
    // A row added counts towards the parent's max_child_rows, as the rows of a parent's PUT do.
    if (typeof written === 'number')
      checkChildRowCount(place.parent, parent, caller.site.config.site.max_child_rows);
    await parent.save();
    const name =
      typeof written === 'number' ? String((parent[place.parentfield] as DocData[])[written]?.name) : written;
    const done: WrittenRow = { child, place, name };
    row = done;
    if (inTransaction)
      await inTransaction(tx.trx as Knex, name, () =>
        answer(caller, { binding: place.parent, doc: parent, messages: [...tx.messages], row: done }),
      );
    return parent;
  });
  return { binding: (row as WrittenRow).place.parent, doc, messages: tx.messages, row };
}

/** Adds a row to the parent document its body names (`parenttype`, `parent`, `parentfield`), by saving the parent. */
export function addRow(
  caller: Caller,
  child: DocTypeBinding,
  body: DocData,
  inTransaction?: InTransaction,
): Promise<Written> {
  assertSomeParentRight(caller, child, 'write');
  const place = placeForNew(caller, child, body);
  const values = rowBody(caller, child, place, body);
  return saveParentOf(
    caller,
    child,
    () => place,
    (rows) => rows.push(values) - 1,
    inTransaction,
  );
}

/** Changes a child row's fields by saving its parent document. */
export function changeRow(
  caller: Caller,
  child: DocTypeBinding,
  name: string,
  body: DocData,
  inTransaction?: InTransaction,
): Promise<Written> {
  assertSomeParentRight(caller, child, 'write');
  const locate = (q: Queryable) => placeOf(caller, child, name, q);
  const edit = (rows: DocData[], place: RowPlace): string => {
    const values = rowBody(caller, child, place, body);
    const i = rows.indexOf(rowNamed(rows, name, child));
    // A stale `modified` (the row as the client last read it) is refused, as for a document.
    const stored = (rows[i] as DocData).modified;
    if (
      body.modified !== undefined &&
      body.modified !== null &&
      formatDatetime(String(body.modified)) !== stored
    )
      throw new TimestampMismatchError(
        `Error: ${child.meta.name} ${clip(name)} has been modified after you have opened it (${String(stored)}, ${String(body.modified)}). Please refresh to get the latest document.`,
      );
    rows[i] = { ...rows[i], ...values };
    return name;
  };
  return saveParentOf(caller, child, locate, edit, inTransaction);
}

/** Removes a child row from its parent document by saving the parent (Frappe's frappe.client.delete of a row). */
export function removeRow(
  caller: Caller,
  child: DocTypeBinding,
  name: string,
  inTransaction?: InTransaction,
): Promise<Written> {
  assertSomeParentRight(caller, child, 'write');
  const locate = (q: Queryable) => placeOf(caller, child, name, q);
  const edit = (rows: DocData[]): string => {
    rows.splice(rows.indexOf(rowNamed(rows, name, child)), 1);
    return name;
  };
  return saveParentOf(caller, child, locate, edit, inTransaction);
}
