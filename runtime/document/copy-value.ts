// Copies of document values: what one holder changes never reaches another's (remembered documents in
// result-cache.ts, a document's stored state in lifecycle.ts, an API answer in serialize.ts).
/**
 * A deep copy of a document value: its arrays and plain objects (child rows, JSON values) are new, each with the
 * prototype it had (Object.prototype, or none: an object without one may hold an own `__proto__` key, which must stay a
 * key); other objects (Buffer, Date) are shared. structuredClone does the same at about ten times the cost.
 */
export function copyValue<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyValue) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
  for (const key of Object.keys(value)) out[key] = copyValue((value as Record<string, unknown>)[key]);
  return out as T;
}
