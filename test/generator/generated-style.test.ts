// The generated TypeScript has one quote and indent style: every string literal single-quoted (the ajv validators
// included), every indent a multiple of two spaces. restyleAjvCode keeps each literal's value.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { restyleAjvCode } from '../../generator/ts/ajv-style';

const GENERATED = join(__dirname, '..', '..', 'generated');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every string literal of `source` (keys and import specifiers included) with its text as written. */
function stringLiterals(source: string): { text: string; value: string }[] {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true);
  const found: { text: string; value: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node)) found.push({ text: node.getText(file), value: node.text });
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

test('every generated TypeScript file is single-quoted with two-space indents', () => {
  const problems: string[] = [];
  const files = tsFiles(GENERATED);
  expect(files.length).toBeGreaterThan(20);
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    for (const literal of stringLiterals(source))
      if (!literal.text.startsWith("'")) problems.push(`${file}: ${literal.text.slice(0, 60)}`);
    source.split('\n').forEach((line, i) => {
      const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
      // JSDoc continuation lines (` * ...`) sit one column past their block's indent.
      const doc = line.slice(indent.length).startsWith('*');
      if (indent.includes('\t') || (indent.length % 2 !== 0 && !doc))
        problems.push(`${file}:${i + 1}: indent ${JSON.stringify(indent)}`);
    });
  }
  expect(problems.slice(0, 20)).toEqual([]);
});

test('restyleAjvCode keeps every literal value and indents by braces', () => {
  const code = [
    'const a = {"k\'ey":"it\'s", "q":"say \\"hi\\"", "re":"^\\\\d{4}$", "brace":"{"};',
    'function f(x){',
    'if(x == "}"){',
    "return 'single';",
    '}',
    '/*# sourceURL="body" */',
    'return "\\n\\u00e9";',
    '}',
    '',
  ].join('\n');
  const out = restyleAjvCode(code);
  expect(stringLiterals(out).map((l) => l.value)).toEqual(stringLiterals(code).map((l) => l.value));
  expect(stringLiterals(out).every((l) => l.text.startsWith("'"))).toBe(true);
  expect(out.split('\n')).toEqual([
    "const a = {'k\\'ey':'it\\'s', 'q':'say \"hi\"', 're':'^\\\\d{4}$', 'brace':'{'};",
    'function f(x){',
    "  if(x == '}'){",
    "    return 'single';",
    '  }',
    '  /*# sourceURL="body" */',
    "  return '\\n\\u00e9';",
    '}',
    '',
  ]);
  expect(() => restyleAjvCode('const t = `x`;')).toThrow(/template literal/);
  expect(() => restyleAjvCode('const s = "open;')).toThrow(/does not end/);
});
