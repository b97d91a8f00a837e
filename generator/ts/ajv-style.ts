// Puts ajv's standalone output in the generated files' one style without re-parsing it (a TypeScript parse of megabytes
// of validators would dominate generation time): double-quoted strings become single-quoted, and lines are indented
// two spaces per open brace. ajv writes its strings with JSON.stringify and emits no template or regex literals.

/** The body of a double-quoted literal (JSON escapes) as the body of the equal single-quoted one. */
function singleQuotedBody(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '\\') {
      const next = body[i + 1] ?? '';
      out += next === '"' ? '"' : `\\${next}`;
      i++;
    } else out += ch === "'" ? "\\'" : ch;
  }
  return out;
}

/** ajv standalone code in single quotes with two-space indents; throws on a template literal or an unended string. */
export function restyleAjvCode(code: string): string {
  let out = '';
  let depth = 0;
  let atLineStart = true;
  for (let i = 0; i < code.length;) {
    const ch = code[i] as string;
    if (atLineStart) {
      while (code[i] === ' ' || code[i] === '\t') i++;
      const first = code[i];
      if (first !== '\n' && first !== undefined)
        out += '  '.repeat(Math.max(0, first === '}' ? depth - 1 : depth));
      atLineStart = false;
      continue;
    }
    if (ch === '"' || ch === "'") {
      let end = i + 1;
      while (end < code.length && code[end] !== ch) end += code[end] === '\\' ? 2 : 1;
      if (end >= code.length) throw new Error('ajv output: a string literal does not end');
      const body = code.slice(i + 1, end);
      out += ch === '"' ? `'${singleQuotedBody(body)}'` : `'${body}'`;
      i = end + 1;
      continue;
    }
    if (ch === '`') throw new Error('ajv output: a template literal (not expected)');
    if (ch === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      if (end < 0) throw new Error('ajv output: a comment does not end');
      out += code.slice(i, end + 2);
      i = end + 2;
      continue;
    }
    if (ch === '/' && code[i + 1] === '/') {
      const end = code.indexOf('\n', i);
      const stop = end < 0 ? code.length : end;
      out += code.slice(i, stop);
      i = stop;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') depth--;
    out += ch;
    if (ch === '\n') atLineStart = true;
    i++;
  }
  return out;
}
