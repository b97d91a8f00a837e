// Compiles the route table into a matcher: rows grouped by their literal prefix (the text before the first `{`), so a
// request is tested against its family's few templates, never against every row, and never per DocType.
import type { ParamName, RouteMatch, RouteParams, RouteRow, Verb } from '../http/route-row';

/** A row ready to match: its template as a regular expression and the names of what it captures. */
interface CompiledRow {
  row: RouteRow;
  regex: RegExp;
  names: readonly ParamName[];
  /** The verbs the row answers; undefined for every verb. */
  verbs: ReadonlySet<string> | undefined;
}

/** Rows sharing one literal prefix; `exact`: the template has no parameter, so the path must equal the prefix. */
interface Family {
  prefix: string;
  exact: boolean;
  rows: CompiledRow[];
}

/** Whether `path` may match a row of `family`: equal to an exact prefix (a trailing slash allowed), or under it. */
function inFamily(family: Family, path: string): boolean {
  return family.exact
    ? path === family.prefix || path === `${family.prefix}/`
    : path.startsWith(family.prefix);
}

/** Finds rows by path and verb. */
export interface RouteMatcher {
  /** The first row whose template matches the path and whose verbs include the verb (HEAD: GET). */
  match(path: string, method: string): RouteMatch | undefined;
  /**
   * The verbs the path answers to (for 405's `Allow`): those of the rows whose template matches it and that `counts`
   * keeps (default: all); empty when there is none.
   */
  allowed(path: string, counts?: (match: RouteMatch) => boolean): Verb[] | '*';
}

const PARAM_NAMES: readonly string[] = ['doctype', 'name', 'method'] satisfies ParamName[];
const ALL_VERBS: readonly Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The regular expression of a template: `{x}` one segment, `{x+}` the rest; one optional trailing slash, as @koa/router. */
function compileRow(row: RouteRow): CompiledRow {
  const names: ParamName[] = [];
  let source = '^';
  let last = 0;
  for (const m of row.path.matchAll(/\{([a-z_]+)(\+?)\}/g)) {
    const name = m[1] as string;
    if (!PARAM_NAMES.includes(name))
      throw new Error(`Route ${row.path}: unknown parameter {${name}} (add it to ParamName)`);
    if (names.includes(name as ParamName)) throw new Error(`Route ${row.path}: {${name}} twice`);
    names.push(name as ParamName);
    source += escape(row.path.slice(last, m.index)) + (m[2] ? '(.+)' : '([^/]+)');
    last = m.index + m[0].length;
  }
  source += `${escape(row.path.slice(last))}/?$`;
  return { row, regex: new RegExp(source), names, verbs: row.verbs === '*' ? undefined : new Set(row.verbs) };
}

/** The literal text before a template's first parameter. */
function literalPrefix(path: string): string {
  const brace = path.indexOf('{');
  return brace < 0 ? path : path.slice(0, brace);
}

// Decodes a captured segment as @koa/router did; the dispatcher has already refused malformed escapes.
const decode = (text: string) => (text.includes('%') ? decodeURIComponent(text) : text);

function paramsOf(compiled: CompiledRow, found: RegExpExecArray): RouteParams {
  const params: RouteParams = { doctype: '', name: '', method: '' };
  for (let i = 0; i < compiled.names.length; i++)
    params[compiled.names[i] as ParamName] = decode(found[i + 1] as string);
  return params;
}

/**
 * Builds the matcher of a table. Families are tried longest prefix first (a literal row such as `/api/method/login`
 * before `/api/method/{method+}`); within a family, rows in table order.
 */
export function createRouteMatcher(table: readonly RouteRow[]): RouteMatcher {
  const byPrefix = new Map<string, Family>();
  for (const row of table) {
    const prefix = literalPrefix(row.path);
    const exact = prefix === row.path;
    const key = `${exact ? '=' : '~'}${prefix}`;
    let family = byPrefix.get(key);
    if (!family) byPrefix.set(key, (family = { prefix, exact, rows: [] }));
    family.rows.push(compileRow(row));
  }
  const families = [...byPrefix.values()].sort((a, b) => b.prefix.length - a.prefix.length);

  function* candidates(path: string): Generator<[CompiledRow, RegExpExecArray]> {
    for (const family of families) {
      if (!inFamily(family, path)) continue;
      for (const compiled of family.rows) {
        const found = compiled.regex.exec(path);
        if (found) yield [compiled, found];
      }
    }
  }

  return {
    match(path, method) {
      // HEAD is answered by the GET rows (Koa sends the headers without the body).
      const verb = method === 'HEAD' ? 'GET' : method;
      // A plain loop, not the generator: this runs on every request.
      for (const family of families) {
        if (!inFamily(family, path)) continue;
        for (const compiled of family.rows) {
          if (compiled.verbs && !compiled.verbs.has(verb)) continue;
          const found = compiled.regex.exec(path);
          if (found) return { row: compiled.row, params: paramsOf(compiled, found) };
        }
      }
      return undefined;
    },
    allowed(path, counts) {
      const verbs = new Set<Verb>();
      for (const [compiled, found] of candidates(path)) {
        if (counts && !counts({ row: compiled.row, params: paramsOf(compiled, found) })) continue;
        if (!compiled.verbs) return '*';
        for (const verb of compiled.verbs) verbs.add(verb as Verb);
      }
      return ALL_VERBS.filter((verb) => verbs.has(verb));
    },
  };
}
