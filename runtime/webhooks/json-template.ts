// The `webhook_json` template: Jinja's `{{ doc.field }}` and nothing else (no statements, no filters but `tojson`,
// no calls), rendered by walking the text, so a template reaches only the document's values and never the host. A
// value inside a JSON string literal is escaped for it; elsewhere it is written as JSON (a null stays null). The
// output is therefore JSON whenever the template is, whatever the document holds (Frappe's Jinja would let a quote in
// a value break the body).
import { ValidationError } from '../errors/errors';

/** One piece of a parsed template: literal text, or a path into the context (`doc`, `items`, `0`, `item_code`). */
type Piece = { text: string; inString: boolean } | { path: (string | number)[]; inString: boolean };

const EXPRESSION = /^\s*([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*|\s*\[\s*\d+\s*\])*)\s*(?:\|\s*tojson\s*)?$/;

/** Parses a template into pieces; throws ValidationError on `{%`, an unclosed `{{` or an expression not over `doc`. */
export function parseTemplate(template: string): Piece[] {
  if (template.includes('{%'))
    throw new ValidationError('JSON Request Body: Jinja statements ({% %}) are not supported');
  const pieces: Piece[] = [];
  let inString = false;
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (c === '{' && template[i + 1] === '{') {
      const end = template.indexOf('}}', i + 2);
      if (end < 0) throw new ValidationError('JSON Request Body: a {{ is not closed');
      const source = template.slice(i + 2, end);
      const match = EXPRESSION.exec(source);
      if (!match)
        throw new ValidationError(`JSON Request Body: {{${source.slice(0, 100)}}} is not doc.<field>`);
      const path = (match[1] as string)
        .split(/\s*\.\s*|\s*\[\s*|\s*\]\s*/)
        .filter(Boolean)
        .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
      if (path[0] !== 'doc')
        throw new ValidationError(`JSON Request Body: {{${source.slice(0, 100)}}} must start with doc`);
      if (text) pieces.push({ text, inString });
      text = '';
      pieces.push({ path: path.slice(1), inString });
      i = end + 1;
      continue;
    }
    if (c === '\\' && inString) {
      text += c + (template[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') inString = !inString;
    text += c;
  }
  if (text) pieces.push({ text, inString });
  return pieces;
}

/** The value at `path` in `doc` (own properties only), or undefined. */
function valueAt(doc: unknown, path: readonly (string | number)[]): unknown {
  let value: unknown = doc;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/** Renders the parsed template with `doc`: the text of a JSON body. */
export function renderTemplate(pieces: readonly Piece[], doc: Record<string, unknown>): string {
  let out = '';
  for (const piece of pieces) {
    if ('text' in piece) {
      out += piece.text;
      continue;
    }
    const value = valueAt(doc, piece.path);
    if (piece.inString) {
      if (value === null || value === undefined) continue;
      const text =
        typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
      out += JSON.stringify(text).slice(1, -1);
    } else out += JSON.stringify(value ?? null);
  }
  return out;
}

/** Throws ValidationError unless `template` parses and renders to JSON for a document with no values. */
export function assertTemplate(template: string): void {
  const text = renderTemplate(parseTemplate(template), {});
  try {
    JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`JSON Request Body is not JSON: ${(err as Error).message}`);
  }
}
