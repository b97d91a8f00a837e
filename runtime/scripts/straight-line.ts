// Which Server Scripts are straight-line: no loop, no function, no call (written or implicit), no way to reach a
// built-in method. Such a script does a bounded amount of work (each token at most a pass over its input or over a
// memory-capped value), so it may run on the event loop thread (inline-sandbox.ts); any other script runs in the worker
// pool. The check is a tokenizer, not a parser, and errs towards "no": whatever it cannot classify for sure (a `/` that
// may start a regular expression, a `(` that may be a call, a computed key, a non-ASCII character in code) makes the
// script go to the workers, where the watchdog bounds it anyway.

/** Scripts longer than this always go to the workers. */
const MAX_SOURCE = 4000;

/** The largest literal index `x[n]` may use (a sparse array's length bounds Array.prototype.join). */
const MAX_INDEX = 100_000;

/**
 * Keywords (and the like) that open functions, loops, calls or other scopes, and `return` (a syntax error in a script,
 * not in the function an inline script is compiled into): never straight-line.
 */
const DENIED_WORDS: ReadonlySet<string> = new Set(
  (
    'function class for while do with new import export async await yield this super arguments eval ' +
    'debugger enum static implements interface package private protected public of get set return'
  ).split(' '),
);

/**
 * Names denied whatever the guest's built-ins hold: those that reach a constructor, a prototype or the caller, and those
 * the engine looks up to call implicitly (conversions, JSON, promises, iteration, Array join, RegExp exec).
 */
const ALWAYS_DENIED: ReadonlySet<string> = new Set(
  (
    'constructor prototype __proto__ caller callee arguments valueOf toString toLocaleString toJSON ' +
    'then __defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__ join next get set has ' +
    'exec'
  ).split(' '),
);

/** Keywords a straight-line script may use. */
const KEYWORDS: ReadonlySet<string> = new Set(
  (
    'var let const if else switch case default break continue throw try catch finally typeof ' +
    'void delete in instanceof true false null'
  ).split(' '),
);

/** Keywords that are values (an operand ends with them). */
const VALUE_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'null']);

/** The globals a straight-line script may name (besides its own `let`/`const`/`var` and `catch` names). */
const FREE: ReadonlySet<string> = new Set(['frappe', 'doc', 'conditions', 'undefined', 'NaN', 'Infinity']);

/** Keywords whose `(` is not a call. */
const CONTROL: ReadonlySet<string> = new Set(['if', 'switch', 'catch']);

const ASSIGN: ReadonlySet<string> = new Set([
  '=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '**=',
  '<<=',
  '>>=',
  '>>>=',
  '&=',
  '|=',
  '^=',
  '&&=',
  '||=',
  '??=',
]);

/** Punctuators, longest first. */
const PUNCTUATORS = [
  '>>>=',
  '...',
  '===',
  '!==',
  '**=',
  '<<=',
  '>>=',
  '>>>',
  '&&=',
  '||=',
  '??=',
  '=>',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '??',
  '?.',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '**',
  '<<',
  '>>',
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ';',
  ',',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '^',
  '!',
  '~',
  '?',
  ':',
  '=',
  '.',
];

type Kind = 'id' | 'num' | 'str' | 'punct' | 'tplStart' | 'tplEnd';
interface Token {
  kind: Kind;
  text: string;
  /** `)`: it closes `if (`, `switch (` or `catch (`. */
  control?: boolean;
  /** An identifier after `.` or `?.` (a member name, even when it is a keyword: `frappe.throw`). */
  member?: boolean;
}

const isIdStart = (c: string) => /^[A-Za-z_$]$/.test(c);
const isIdPart = (c: string) => /^[A-Za-z0-9_$]$/.test(c);
const isDigit = (c: string) => c >= '0' && c <= '9';

/** The tokens of `source`, or undefined when something in it is outside the straight-line alphabet. */
function tokenize(source: string): Token[] | undefined {
  const tokens: Token[] = [];
  // Open brackets: '{', '(', '[' or '${' (a template's substitution).
  const open: string[] = [];
  let i = 0;
  const n = source.length;
  /**
   * Scans template text from i (just past '`' or a substitution's '}') to its end ('`', a tplEnd token) or to the next
   * substitution ('${'). False on an unterminated template.
   */
  const templateText = (): boolean => {
    while (i < n) {
      const c = source[i] as string;
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '`') {
        i++;
        tokens.push({ kind: 'tplEnd', text: '`' });
        return true;
      }
      if (c === '$' && source[i + 1] === '{') {
        i += 2;
        open.push('${');
        tokens.push({ kind: 'punct', text: '${' });
        return true;
      }
      i++;
    }
    return false;
  };
  while (i < n) {
    const c = source[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f') {
      i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '/') {
      // A line comment ends at any line terminator JavaScript knows.
      while (i < n && !'\n\r\u2028\u2029'.includes(source[i] as string)) i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 2;
      continue;
    }
    // HTML-like comments (Annex B) and a hashbang: not worth telling apart from code.
    if (source.startsWith('<!--', i) || source.startsWith('-->', i) || c === '#') return undefined;
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < n && source[j] !== c) {
        const d = source[j] as string;
        if (d === '\n' || d === '\r') return undefined;
        j += d === '\\' ? 2 : 1;
      }
      if (j >= n) return undefined;
      tokens.push({ kind: 'str', text: source.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    if (c === '`') {
      i++;
      tokens.push({ kind: 'tplStart', text: '`' });
      if (!templateText()) return undefined;
      continue;
    }
    if (c === '}' && open[open.length - 1] === '${') {
      open.pop();
      i++;
      // The '}' closing a substitution, as its own token ('}$').
      tokens.push({ kind: 'punct', text: '}$' });
      if (!templateText()) return undefined;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1] ?? ''))) {
      const m = /^(?:0[xXoObB][0-9a-fA-F_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?)/.exec(
        source.slice(i),
      );
      const text = m?.[0] ?? '';
      // A BigInt (`1n`), or anything glued to the number: not straight-line.
      if (!text || isIdPart(source[i + text.length] ?? '')) return undefined;
      tokens.push({ kind: 'num', text });
      i += text.length;
      continue;
    }
    if (isIdStart(c)) {
      let j = i + 1;
      while (j < n && isIdPart(source[j] as string)) j++;
      tokens.push({ kind: 'id', text: source.slice(i, j) });
      i = j;
      continue;
    }
    const p = PUNCTUATORS.find((q) => source.startsWith(q, i));
    if (!p) return undefined;
    // `a?.5:b` is a conditional, not optional chaining.
    const text = p === '?.' && isDigit(source[i + 2] ?? '') ? '?' : p;
    if (text === '{' || text === '(' || text === '[') open.push(text);
    if (text === '}' || text === ')' || text === ']') open.pop();
    tokens.push({ kind: 'punct', text });
    i += text.length;
  }
  return tokens;
}

/** Whether `t` ends an operand (after it, `(` is a call, `[` a member, `/` a division, '`' a tagged template). */
function endsOperand(t: Token | undefined): boolean {
  if (!t) return false;
  if (t.kind === 'num' || t.kind === 'str' || t.kind === 'tplEnd') return true;
  if (t.kind === 'id') return t.member === true || !KEYWORDS.has(t.text) || VALUE_WORDS.has(t.text);
  return t.text === ']' || (t.text === ')' && !t.control) || t.text === '}';
}

/** The text of a string literal without escapes (undefined when it has any). */
function plainString(t: Token): string | undefined {
  return t.text.includes('\\') ? undefined : t.text.slice(1, -1);
}

/**
 * Whether `source` is a straight-line script. `denied`: the member and key names it may not use (the guest's
 * built-in methods, constructors and prototypes, and accessors such as `__proto__`).
 */
export function isStraightLine(source: string, denied: ReadonlySet<string>): boolean {
  if (source.length > MAX_SOURCE) return false;
  const tokens = tokenize(source);
  if (!tokens) return false;
  // The script's own names: after let/const/var, and a catch parameter. A denied name may not be declared (`let
  // valueOf = ...; x = { valueOf }` would make an implicit call), nor a global the result is read from (inline, the
  // script is a function body, where `var conditions` would stay local).
  const declared = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k] as Token;
    const prev = tokens[k - 1]?.text;
    const declares =
      prev === 'let' ||
      prev === 'const' ||
      prev === 'var' ||
      (prev === '(' && tokens[k - 2]?.text === 'catch');
    if (t.kind !== 'id' || !declares) continue;
    if (denied.has(t.text) || ALWAYS_DENIED.has(t.text) || FREE.has(t.text)) return false;
    declared.add(t.text);
  }
  // Open brackets, as the checks see them ('{', '(' or '[', and '${' for a template's substitution).
  const open: Token[] = [];
  const memberOk = (name: string, next: Token | undefined) =>
    !denied.has(name) &&
    !ALWAYS_DENIED.has(name) &&
    !(name === 'length' && next !== undefined && ASSIGN.has(next.text));
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k] as Token;
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    const inObject = open[open.length - 1]?.text === '{';
    const keyPlace = inObject && (prev?.text === '{' || prev?.text === ',') && next?.text === ':';
    switch (t.kind) {
      case 'num':
        continue;
      case 'str': {
        if (!keyPlace) continue;
        const key = plainString(t);
        if (key === undefined || !memberOk(key, undefined)) return false;
        continue;
      }
      case 'tplStart':
        // A template right after an operand is a tagged template: a call.
        if (endsOperand(prev)) return false;
        continue;
      case 'tplEnd':
        continue;
      case 'id': {
        if (prev?.text === '.' || prev?.text === '?.') {
          t.member = true;
          if (!memberOk(t.text, next)) return false;
          continue;
        }
        if (DENIED_WORDS.has(t.text)) return false;
        if (KEYWORDS.has(t.text)) {
          // Destructuring declarations are not straight-line (their names would be members read by name).
          if ((t.text === 'let' || t.text === 'const' || t.text === 'var') && next?.kind !== 'id')
            return false;
          continue;
        }
        if (keyPlace) {
          if (!memberOk(t.text, undefined)) return false;
          continue;
        }
        if (!FREE.has(t.text) && !declared.has(t.text)) return false;
        continue;
      }
      case 'punct':
        break;
    }
    switch (t.text) {
      case '=>':
      case '...':
        return false;
      case '${':
        open.push(t);
        continue;
      case '}$':
        if (open.pop()?.text !== '${') return false;
        continue;
      case '?.':
        if (next?.kind !== 'id') return false;
        continue;
      case '--':
        continue;
      case '/':
      case '/=':
        // After an operand `/` divides; anywhere else it starts a regular expression.
        if (!endsOperand(prev) || prev?.text === '}') return false;
        continue;
      case '(':
        if (endsOperand(prev)) return false;
        open.push({ ...t, control: prev?.kind === 'id' && CONTROL.has(prev.text) });
        continue;
      case ')': {
        const opener = open.pop();
        if (opener?.text !== '(') return false;
        t.control = opener.control === true;
        continue;
      }
      case '[':
        if (endsOperand(prev)) {
          // A member by literal name or index only.
          const key = tokens[k + 1];
          if (tokens[k + 2]?.text !== ']' || !key) return false;
          if (prev?.text === '}') return false;
          if (key.kind === 'num') {
            const index = Number(key.text);
            if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) return false;
          } else if (key.kind === 'str') {
            const name = plainString(key);
            if (name === undefined || !memberOk(name, tokens[k + 3])) return false;
          } else return false;
        } else if (inObject && (prev?.text === '{' || prev?.text === ',')) return false;
        open.push(t);
        continue;
      case ']':
        if (open.pop()?.text !== '[') return false;
        continue;
      case '{':
        open.push(t);
        continue;
      case '}':
        if (open.pop()?.text !== '{') return false;
        continue;
      default:
        continue;
    }
  }
  return open.length === 0;
}

/**
 * The fields of `doc` a straight-line script can see: the names it reads or writes as `doc.<name>` or
 * `doc['<name>']`; undefined when it uses `doc` any other way (passes it on, replaces it, tests it with `in`), when it
 * needs the whole document. Only these fields need to cross into the sandbox and back.
 */
export function docMembers(source: string): string[] | undefined {
  const tokens = tokenize(source);
  if (!tokens) return undefined;
  const names = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k] as Token;
    if (t.kind !== 'id' || t.text !== 'doc') continue;
    const prev = tokens[k - 1]?.text;
    if (prev === '.' || prev === '?.') continue;
    // `{ doc: ... }`: a key, not the global.
    if (tokens[k + 1]?.text === ':' && (prev === '{' || prev === ',')) return undefined;
    const next = tokens[k + 1];
    const name = tokens[k + 2];
    if ((next?.text === '.' || next?.text === '?.') && name?.kind === 'id') names.add(name.text);
    else if (next?.text === '[' && name?.kind === 'str' && tokens[k + 3]?.text === ']') {
      const key = plainString(name);
      if (key === undefined) return undefined;
      names.add(key);
    } else return undefined;
  }
  return [...names];
}
