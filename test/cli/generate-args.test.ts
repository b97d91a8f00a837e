// `svc generate` reads several DocType folders after one --doctypes as well as one per repeated flag, and refuses a
// bare folder that no --doctypes precedes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { generateCommand, parseGenerateArgs } from '../../generator/cli';

const ROOT = path.resolve(__dirname, '../..');

test.each([
  [[], ['doctypes']],
  [['--doctypes', 'a'], ['a']],
  [
    ['--doctypes', 'a', 'b', 'c'],
    ['a', 'b', 'c'],
  ],
  [
    ['--doctypes', 'a', '--doctypes', 'b'],
    ['a', 'b'],
  ],
  [
    ['--doctypes=a', 'b'],
    ['a', 'b'],
  ],
  [
    ['--doctypes', 'a', 'b', '--out', 'o', '--doctypes', 'c', 'd'],
    ['a', 'b', 'c', 'd'],
  ],
  [
    ['--quiet', '--doctypes', 'a', 'b'],
    ['a', 'b'],
  ],
])('%j reads the folders %j', (argv, doctypes) => {
  expect(parseGenerateArgs(argv).doctypes).toEqual(doctypes);
});

test('the other options keep their meaning beside several folders', () => {
  expect(parseGenerateArgs(['--doctypes', 'a', 'b', '--out', 'o', '--quiet'])).toEqual({
    doctypes: ['a', 'b'],
    out: 'o',
    quiet: true,
    help: false,
  });
});

test.each([
  [['stray']],
  [['--out', 'o', 'stray']],
  [['--doctypes', 'a', '--quiet', 'stray']],
  [['--doctypes', 'a', '--', 'b']],
])('%j is refused: a bare folder must follow --doctypes', (argv) => {
  expect(() => parseGenerateArgs(argv)).toThrow(/folders follow --doctypes/);
});

test('an unknown flag is refused', () => {
  expect(() => parseGenerateArgs(['--doctype', 'a'])).toThrow();
});

test('svc generate --doctypes A B generates the DocTypes of both folders', async () => {
  mkdirSync(path.join(ROOT, 'test/tmp'), { recursive: true });
  const out = mkdtempSync(path.join(ROOT, 'test/tmp/generate-args-'));
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const code = await generateCommand([
      '--doctypes',
      'doctypes',
      'test/fixtures/doctypes/contacts',
      '--out',
      path.relative(process.cwd(), out),
      '--quiet',
    ]);
    expect(code).toBe(0);
    const index = readFileSync(path.join(out, 'index.ts'), 'utf8');
    expect(index).toContain('contact_card_phone');
    expect(index).toContain('todo');
  } finally {
    log.mockRestore();
    rmSync(out, { recursive: true, force: true });
  }
}, 90_000);
