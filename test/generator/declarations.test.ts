// The text templates of generator/ts/declarations.ts print what ts-morph's structure printer printed before them, for
// the awkward doc texts too (trailing spaces, blank, several lines, a leading empty line), so generated/ stays the same.
import { printStructure, StructureKind, type StatementStructures } from 'ts-morph';
import { importLine, interfaceText, jsDoc } from '../../generator/ts/declarations';

const print = (statements: StatementStructures[]) =>
  printStructure(
    { kind: StructureKind.SourceFile, statements },
    { indentNumberOfSpaces: 2, newLine: '\n', useSingleQuote: true },
  );

const DOCS = [
  'Title',
  'Employee ',
  '  ',
  '',
  'Line one\nline two',
  '\nafter an empty line',
  'a\r\n\nb ',
  "it's `x`",
];

describe('generator/ts/declarations', () => {
  test.each(DOCS)('an interface property documented %j prints as ts-morph prints it', (docs) => {
    const properties = [
      { name: 'title', type: "'A' | 'B' | null", optional: true, docs },
      { name: 'idx', type: 'number' },
    ];
    expect(interfaceText('Doc', properties, { docs })).toBe(
      print([
        {
          kind: StructureKind.Interface,
          name: 'Doc',
          isExported: true,
          docs: [docs],
          properties: properties.map((p) => ({
            name: p.name,
            type: p.type,
            hasQuestionToken: p.optional,
            docs: p.docs === undefined ? undefined : [p.docs],
          })),
        },
      ]),
    );
  });

  test('an interface without members and with extends, and imports', () => {
    expect(
      importLine(['Model'], 'objection') +
        importLine(['A', 'B'], './a', true) +
        '\n' +
        interfaceText('AModel', [], { extendsText: 'Partial<A>' }),
    ).toBe(
      print([
        { kind: StructureKind.ImportDeclaration, moduleSpecifier: 'objection', namedImports: ['Model'] },
        {
          kind: StructureKind.ImportDeclaration,
          moduleSpecifier: './a',
          namedImports: ['A', 'B'],
          isTypeOnly: true,
        },
        { kind: StructureKind.Interface, name: 'AModel', isExported: true, extends: ['Partial<A>'] },
      ]),
    );
  });

  test('a JSDoc at an indent', () => {
    expect(jsDoc('one\ntwo', '  ')).toBe('  /**\n   * one\n   * two\n   */\n');
  });
});
