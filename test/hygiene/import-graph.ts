// The repository's import graph between its own TypeScript files, read with the TypeScript parser (no type-check):
// static imports and re-exports, `import type`, `typeof import('…')`, and the lazy `require('…')` / `import('…')`
// calls that load a module inside a function. Only relative specifiers count; packages are not our layers.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One import of one repository file by another, both as paths relative to the repository root with `/`. */
export interface ImportEdge {
  from: string;
  to: string;
}

/** Every `.ts` file under `dir` (relative to `root`), sorted, as repository paths. */
export function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

/** The module specifiers a file's text names: declarations, type imports and `require` / `import()` calls. */
export function importSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) found.push(expression.text);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal))
        found.push(argument.literal.text);
    } else if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      if ((isRequire || isImport) && first && ts.isStringLiteralLike(first)) found.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The repository file a relative specifier names from `from`, or undefined for a package or a non-TypeScript file. */
export function resolveSpecifier(
  root: string,
  from: string,
  specifier: string,
  exists: (file: string) => boolean = (file) => existsSync(path.join(root, file)),
): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [`${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')];
  return candidates.find((file) => file.endsWith('.ts') && exists(file));
}

/**
 * The imports between the given files and any repository file they name. `read` and `exists` default to the disk;
 * a test passes its own to plant a file that is not there.
 */
export function readImportGraph(
  root: string,
  files: readonly string[],
  read: (file: string) => string = (file) => readFileSync(path.join(root, file), 'utf8'),
  exists?: (file: string) => boolean,
): ImportEdge[] {
  const edges = new Map<string, ImportEdge>();
  for (const from of files) {
    for (const specifier of importSpecifiers(from, read(from))) {
      const to = resolveSpecifier(root, from, specifier, exists);
      if (to !== undefined && to !== from) edges.set(`${from} ${to}`, { from, to });
    }
  }
  return [...edges.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}
