// The typed filter tree every list-shaped surface is built from: user filters, permission restrictions and
// controller list restrictions all become this tree, never SQL text.

/** A comparison the query engine supports. */
export type FilterOperator =
  | '='
  | '!='
  | '>'
  | '<'
  | '>='
  | '<='
  | 'like'
  | 'not like'
  | 'in'
  | 'not in'
  | 'between'
  | 'is'
  | 'timespan'
  | 'previous'
  | 'next';

/** One condition on a field of the queried DocType, or (with `table`) on a field of one of its child tables. */
export interface FilterCondition {
  kind: 'condition';
  /** The fieldname on the queried DocType (or on the child DocType when `table` is set). */
  field: string;
  /** The Table fieldname of the parent whose child rows the condition reads (joins the child table). */
  table?: string;
  op: FilterOperator;
  value: unknown;
}

/** All (`and`) or any (`or`) of the children hold. An empty `and` is true, an empty `or` is false. */
export interface FilterGroup {
  kind: 'and' | 'or';
  children: FilterNode[];
}

/**
 * Rows of a child DocType whose parent document, of `doctype`, passes `restriction` (the reader's row restriction on
 * the parent, when child rows are listed with `parent=<DocType>`): `parent IN (SELECT name FROM <parent> WHERE ...)`.
 */
export interface ParentCondition {
  kind: 'parent';
  doctype: string;
  restriction: FilterNode;
}

/** A node of the filter tree. */
export type FilterNode = FilterCondition | FilterGroup | ParentCondition;

/** A condition node. */
export function cond(field: string, op: FilterOperator, value: unknown, table?: string): FilterCondition {
  return table === undefined
    ? { kind: 'condition', field, op, value }
    : { kind: 'condition', field, table, op, value };
}

/** All of the nodes. */
export function and(...children: FilterNode[]): FilterGroup {
  return { kind: 'and', children };
}

/** Any of the nodes. */
export function or(...children: FilterNode[]): FilterGroup {
  return { kind: 'or', children };
}
