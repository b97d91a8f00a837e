// The README's and the guides' example files (code blocks whose info string names a path under doctypes/, such as
// ```ts doctypes/shop/widget/widget.ts) generate with the repo's DocTypes and type-check under the repo's options.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFiles } from '../../generator/run-generator';
import { writeFileMap } from '../../generator/write/file-map';

const ROOT = path.resolve(__dirname, '../..');
/** Inside the repo, so `doctype-service` imports resolve through the package's self-reference. */
const OUT = path.join(ROOT, 'test/tmp', `readme-examples-${process.pid}`);
const TIMEOUT = 600_000;

/** One example file as a document shows it. */
interface Example {
  doc: string;
  file: string;
  text: string;
}

/** The example files of one markdown document, in order: fenced blocks tagged with a `doctypes/...` path. */
function examplesIn(doc: string, markdown: string): Example[] {
  const fence = /^( *)```\w+ (doctypes\/\S+)\n([\s\S]*?)^\1```$/gm;
  return [...markdown.matchAll(fence)].map(([, indent = '', file = '', body = '']) => ({
    doc,
    file,
    text: body
      .split('\n')
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n'),
  }));
}

/**
 * The sets of files a reader following the documents would have: a file shown again replaces the earlier one, so each
 * replacement closes a set (the README shows the Widget controller first bare, then with methods).
 */
function exampleSets(examples: Example[]): Map<string, string>[] {
  const sets: Map<string, string>[] = [];
  let current = new Map<string, string>();
  for (const { file, text } of examples) {
    if (current.has(file)) {
      sets.push(current);
      current = new Map(current);
    }
    current.set(file, text);
  }
  return [...sets, current];
}

const documents = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)]
  .filter((f) => f.endsWith('.md'))
  .sort((a, b) => (a === 'README.md' ? -1 : b === 'README.md' ? 1 : a < b ? -1 : 1));
const examples = documents.flatMap((doc) => examplesIn(doc, readFileSync(path.join(ROOT, doc), 'utf8')));
const sets = exampleSets(examples);

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

test('the README shows the Widget DocType, its controller, and the controller again with methods', () => {
  const readme = examples.filter((e) => e.doc === 'README.md').map((e) => e.file);
  expect(readme).toEqual([
    'doctypes/shop/widget/widget.json',
    'doctypes/shop/widget/widget.ts',
    'doctypes/shop/widget/widget.ts',
  ]);
  expect(sets.length).toBeGreaterThanOrEqual(2);
  expect(sets.at(-1)?.get('doctypes/shop/widget/widget.ts')).toContain('@whitelist(');
});

test(
  'every set of example files generates with the repo DocTypes and type-checks',
  async () => {
    rmSync(OUT, { recursive: true, force: true });
    for (const [n, set] of sets.entries()) {
      const dir = path.join(OUT, `set-${n}`);
      for (const [file, text] of set) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      }
      const built = await buildFiles({
        doctypes: ['doctypes', path.relative(ROOT, path.join(dir, 'doctypes'))],
        out: path.relative(ROOT, path.join(dir, 'generated')),
        cwd: ROOT,
      });
      if ([...set.values()].some((text) => text.includes('@whitelist(')))
        expect(built.files.has('methods/widget.ts')).toBe(true);
      writeFileMap(built.files, path.join(dir, 'generated'));
    }
    const tsconfig = { extends: '../../../tsconfig.json', include: ['.'], exclude: [] };
    writeFileSync(path.join(OUT, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    const tsc = require.resolve('typescript/lib/tsc.js');
    const child = spawn(process.execPath, [tsc, '--noEmit', '--pretty', 'false', '-p', OUT], { cwd: ROOT });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, output }).toEqual({ code: 0, output: '' });
  },
  TIMEOUT,
);
