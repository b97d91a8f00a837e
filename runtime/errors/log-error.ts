// describeError: the text a server error leaves in the log, without the values a database error carries (the SQL
// with its bound values, which may be session tokens, secrets or user input).
/** Own properties of an error that are safe to log (driver codes); every other one (`sql`, `bindings`, …) is left out. */
const SAFE_FIELDS = ['code', 'errno', 'sqlState', 'status'] as const;

/** Placeholder for values that might be bound parameters in a message (quoted literals after the SQL). */
const QUOTED = /'(?:[^'\\]|\\.)*'/g;

/** One log entry for a server error: class, message (quoted literals masked), driver codes and stack frames. */
export function describeError(err: unknown): string {
  // Duck-typed, not instanceof: errors of a driver or another realm (vm contexts) are errors too.
  if (err === null || typeof err !== 'object' || typeof (err as Error).message !== 'string')
    return `non-error thrown: ${typeof err}`;
  const record = err as Record<string, unknown>;
  const codes = SAFE_FIELDS.filter((k) => record[k] !== undefined).map((k) => `${k}=${String(record[k])}`);
  const message = String(record.message).replace(QUOTED, "'?'");
  const name = typeof record.name === 'string' ? record.name : 'Error';
  const frames = String(record.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
  return `${name}: ${message}${codes.length ? ` (${codes.join(', ')})` : ''}${frames ? `\n${frames}` : ''}`;
}
