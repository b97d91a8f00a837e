// Prints plain data as a TypeScript literal in the generated files' one style: single quotes, two-space indents,
// bare keys where they are identifiers, and a value on one line when it fits in 120 columns.
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A string as a single-quoted TypeScript literal. */
export function quote(text: string): string {
  const json = JSON.stringify(text).slice(1, -1);
  return `'${json.replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : quote(name);
}

/** Plain data (strings, numbers, booleans, null, arrays, objects) as a TypeScript literal starting at `indent`. */
export function tsLiteral(value: unknown, indent = ''): string {
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (value === undefined) return 'undefined';
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((item) => tsLiteral(item, inner))
    : Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${key(k)}: ${tsLiteral(v, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (items.length === 0) return `${open}${close}`;
  const flat = Array.isArray(value) ? `[${items.join(', ')}]` : `{ ${items.join(', ')} }`;
  if (!flat.includes('\n') && indent.length + flat.length <= 120) return flat;
  return `${open}\n${items.map((item) => `${inner}${item},`).join('\n')}\n${indent}${close}`;
}
