// Every casing rule of the generator in one place: file slugs, class names, identifiers.
import { quote } from './ts/literal';

/** Frappe's `scrub`: lower case, spaces and dashes as underscores (`Has Role` → `has_role`). */
export function scrub(name: string): string {
  return name
    .trim()
    .replace(/[\s-]+/g, '_')
    .toLowerCase();
}

/** A PascalCase TypeScript identifier for a DocType (`Has Role` → `HasRole`, `ToDo` → `ToDo`). */
export function className(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  return /^[0-9]/.test(joined) ? `D${joined}` : joined || 'Unnamed';
}

/** The identifier prefix of a DocType's modules in the registry (`Has Role` → `has_role`, `2FA Log` → `_2fa_log`). */
export function moduleIdentifier(name: string): string {
  const id = scrub(name).replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(id) ? `_${id}` : id;
}

/** True when `key` can be written as a bare TypeScript property name. */
export function isIdentifier(key: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key);
}

/** A property name as written in TypeScript source: bare when possible, quoted otherwise. */
export function propertyName(key: string): string {
  return isIdentifier(key) ? key : quote(key);
}
