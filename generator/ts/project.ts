// Prints ts-morph source file structures in the generated files' one style (two-space indents, LF, single quotes).
// printStructure writes the text straight from the structure: creating a project source file from it printed the same
// text and then parsed it into a syntax tree nobody read (1.7 s of 3.4 s for the 766 fixture DocTypes' models and routes).
import { printStructure, StructureKind, type SourceFileStructure } from 'ts-morph';

/** Prints a source file built from a ts-morph structure, prefixed with the generated-file header. */
export function printSourceFile(
  headerLine: string,
  structure: SourceFileStructure | Omit<SourceFileStructure, 'kind'>,
): string {
  const text = printStructure(
    { ...structure, kind: StructureKind.SourceFile },
    { indentNumberOfSpaces: 2, newLine: '\n', useSingleQuote: true },
  );
  return headerLine + text;
}
