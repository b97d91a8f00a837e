// What a live column type holds, whatever the backend spells it (`varchar(140)`, `character varying(140)`, `int`,
// `integer`, `decimal(21,9)`, `float`, `datetime(6)`, `timestamp`): the family a type change converts from.
import type { ColumnKind } from '../meta/field-types';

/** The family of values a column type holds. */
export type TypeFamily = 'text' | 'integer' | 'decimal' | 'date' | 'datetime' | 'time' | 'other';

/** The family of a live column type, and its varchar length where it has one. */
export function typeFamily(type: string): { family: TypeFamily; length?: number } {
  const t = type.toLowerCase().trim();
  const varchar = /^(?:varchar|character varying|char)\s*\((\d+)\)/.exec(t);
  if (varchar) return { family: 'text', length: Number(varchar[1]) };
  if (/^(?:tiny|medium|long)?text\b|^json\b|^clob\b/.test(t)) return { family: 'text' };
  if (/^(?:tiny|small|medium|big)?int(?:eger)?\b|^boolean\b/.test(t)) return { family: 'integer' };
  if (/^(?:decimal|numeric|float|double|real)\b/.test(t)) return { family: 'decimal' };
  if (/^date$/.test(t)) return { family: 'date' };
  if (/^(?:datetime|timestamp)\b/.test(t)) return { family: 'datetime' };
  if (/^time\b/.test(t)) return { family: 'time' };
  return { family: 'other' };
}

/** The family a column kind stores. */
export function kindFamily(kind: ColumnKind): TypeFamily {
  switch (kind) {
    case 'varchar':
    case 'text':
    case 'longtext':
    case 'json':
      return 'text';
    case 'int':
    case 'bigint':
    case 'check':
      return 'integer';
    case 'decimal':
    case 'rating':
      return 'decimal';
    case 'date':
    case 'datetime':
    case 'time':
      return kind;
    case 'table':
    case 'none':
      return 'other';
    default:
      return kind satisfies never;
  }
}
