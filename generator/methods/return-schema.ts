// The JSON Schema of a whitelisted method's result, read from its TypeScript return type through the type checker.
import type { Node, Type } from 'ts-morph';
import type { JsonSchema } from '../json-schema';
import { UnsupportedArgumentType, typeSchema } from './argument-schema';

/** What a method answers: the result's schema, and whether the envelope may lack it (void, or undefined possible). */
export interface ResultSchema {
  /**
   * Schema of the value in `message` (v1) / `data` (v2); `{}` when the type says nothing (any, unknown, unresolved);
   * undefined when the method returns nothing (void), so the key is never there.
   */
  schema?: JsonSchema;
  /** True when the method may return undefined, so the envelope key is left out. */
  optional: boolean;
}

const isNothing = (t: Type) => t.isUndefined() || t.isVoid() || t.getText() === 'never';

/** The awaited type: `Promise<T>` (and `PromiseLike<T>`) is read as `T`, recursively. */
function awaited(type: Type): Type {
  const name = type.getSymbol()?.getName();
  if ((name === 'Promise' || name === 'PromiseLike') && type.getTypeArguments().length === 1)
    return awaited(type.getTypeArguments()[0] as Type);
  return type;
}

/**
 * The result schema of a method whose return type is `type` (seen at `at`). A type with no JSON form (a Date, a
 * function) becomes `{}`: the value still travels as JSON.stringify writes it, so nothing narrower is promised.
 */
export function resultSchema(type: Type, at: Node): ResultSchema {
  const value = awaited(type);
  if (isNothing(value)) return { optional: true };
  const members = value.isUnion() ? value.getUnionTypes() : [value];
  const optional = members.some(isNothing);
  const kept = members.filter((t) => !isNothing(t));
  try {
    if (kept.length === 1) return { schema: typeSchema(kept[0] as Type, at), optional };
    return { schema: typeSchema(value, at), optional };
  } catch (err) {
    if (err instanceof UnsupportedArgumentType) return { schema: {}, optional };
    throw err;
  }
}
