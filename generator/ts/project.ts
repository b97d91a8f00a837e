// An in-memory ts-morph project with fixed printing settings, shared by the emitters.
import { IndentationText, NewLineKind, Project, QuoteKind, type SourceFileStructure } from 'ts-morph';

let shared: Project | undefined;

function project(): Project {
  shared ??= new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      newLineKind: NewLineKind.LineFeed,
      quoteKind: QuoteKind.Single,
      useTrailingCommas: true,
    },
  });
  return shared;
}

/** Prints a source file built from a ts-morph structure, prefixed with the generated-file header. */
export function printSourceFile(
  headerLine: string,
  structure: SourceFileStructure | Omit<SourceFileStructure, 'kind'>,
): string {
  const file = project().createSourceFile('/out.ts', structure, { overwrite: true });
  const text = file.getFullText();
  project().removeSourceFile(file);
  return headerLine + text;
}
