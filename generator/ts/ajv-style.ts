// Puts ajv's standalone output in the generated files' one style without re-parsing it (a TypeScript parse of megabytes
// of validators would dominate generation time): double-quoted strings become single-quoted, and lines are indented
// two spaces per open brace. ajv writes its strings with JSON.stringify and emits no template or regex literals.

/** The body of a double-quoted literal (JSON escapes) as the body of the equal single-quoted one. */
function singleQuotedBody(body: string): string {
  if (!body.includes('\\') && !body.includes("'")) return body;
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

/** Characters the restyler acts on; every other character is copied as it is, a run at a time. */
const SPECIAL = /["'`/{}\n]/g;

/** ajv standalone code in single quotes with two-space indents; throws on a template literal or an unended string. */
export function restyleAjvCode(code: string): string {
  // Parts are collected and joined once: appending a character at a time made a string of millions of pieces.
  const out: string[] = [];
  let depth = 0;
  let i = 0;
  while (i < code.length) {
    // At the start of a line: drop its indentation and write ours.
    while (code[i] === ' ' || code[i] === '\t') i++;
    const first = code[i];
    if (first === undefined) break;
    if (first !== '\n') out.push('  '.repeat(Math.max(0, first === '}' ? depth - 1 : depth)));
    // The rest of the line.
    for (;;) {
      SPECIAL.lastIndex = i;
      const found = SPECIAL.exec(code);
      const at = found ? found.index : code.length;
      if (at > i) out.push(code.slice(i, at));
      i = at;
      if (!found) break;
      const ch = found[0];
      if (ch === '"' || ch === "'") {
        let end = i + 1;
        while (end < code.length && code[end] !== ch) end += code[end] === '\\' ? 2 : 1;
        if (end >= code.length) throw new Error('ajv output: a string literal does not end');
        const body = code.slice(i + 1, end);
        out.push(ch === '"' ? `'${singleQuotedBody(body)}'` : `'${body}'`);
        i = end + 1;
        continue;
      }
      if (ch === '`') throw new Error('ajv output: a template literal (not expected)');
      if (ch === '/' && code[i + 1] === '*') {
        const end = code.indexOf('*/', i + 2);
        if (end < 0) throw new Error('ajv output: a comment does not end');
        out.push(code.slice(i, end + 2));
        i = end + 2;
        continue;
      }
      if (ch === '/' && code[i + 1] === '/') {
        const end = code.indexOf('\n', i);
        const stop = end < 0 ? code.length : end;
        out.push(code.slice(i, stop));
        i = stop;
        continue;
      }
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
      out.push(ch);
      i++;
      if (ch === '\n') break;
    }
  }
  return out.join('');
}
