// Copies of document values, so that what one caller changes never reaches a remembered document (result-cache.ts).
/**
 * A copy of a document value: its arrays and plain objects (child rows, JSON values) are new, so nothing a caller does
 * to its answer reaches a remembered document or another request's. Other objects (Buffer, Date) are shared.
 */
export function copyValue<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyValue) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = copyValue((value as Record<string, unknown>)[key]);
  return out as T;
}
