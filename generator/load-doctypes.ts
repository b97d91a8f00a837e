// Load phase: find every DocType JSON under the given roots, in a stable order.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Problem } from './problems';
import { sourceHash } from './source-hash';

/** A DocType file as read from disk, not yet checked. */
export interface LoadedDocType {
  /** Path relative to the working directory, with forward slashes (used in messages and headers). */
  file: string;
  /** Path relative to its doctypes root, with forward slashes (used for dotted method paths). */
  relative: string;
  /** The doctypes root this file was found under, relative to the working directory. */
  root: string;
  /** Parsed JSON. */
  json: unknown;
  /** SHA-1 of the file's bytes (generated/doctype-sources.json: `svc serve` warns when a file no longer matches). */
  sha1: string;
  /** Controller file (`<name>.ts` beside the JSON), relative to the working directory, when present. */
  controller?: string;
}

/** Result of the load phase. */
export interface LoadResult {
  doctypes: LoadedDocType[];
  problems: Problem[];
}

const toPosix = (p: string) => p.split(path.sep).join('/');

function walk(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      out.push(...walk(full));
    } else if (entry.isFile() && entry.name.endsWith('.json')) {
      out.push(full);
    }
  }
  return out;
}

/**
 * Reads every `*.json` under `roots` whose top-level `doctype` is `DocType`, sorted by DocType file path. Synchronous
 * calls: awaiting about 2,400 reads, stats and directory listings one after another took 0.7 s for the 766 fixture
 * DocTypes, against 0.07 s this way (nothing else runs meanwhile).
 */
export function loadDocTypes(roots: string[], cwd = process.cwd()): LoadResult {
  const doctypes: LoadedDocType[] = [];
  const problems: Problem[] = [];
  for (const root of roots) {
    const absRoot = path.resolve(cwd, root);
    const files = walk(absRoot);
    for (const abs of files) {
      const file = toPosix(path.relative(cwd, abs));
      let json: unknown;
      let text: string;
      try {
        text = readFileSync(abs, 'utf8');
        json = JSON.parse(text);
      } catch (err) {
        problems.push({
          file,
          pointer: '',
          message: `invalid JSON: ${(err as Error).message}`,
          severity: 'error',
        });
        continue;
      }
      if (typeof json !== 'object' || json === null || (json as { doctype?: unknown }).doctype !== 'DocType')
        continue;
      const controllerAbs = abs.replace(/\.json$/, '.ts');
      const controller = existsSync(controllerAbs) ? toPosix(path.relative(cwd, controllerAbs)) : undefined;
      doctypes.push({
        file,
        relative: toPosix(path.relative(absRoot, abs)),
        root: toPosix(path.relative(cwd, absRoot)) || '.',
        json,
        sha1: sourceHash(text),
        ...(controller ? { controller } : {}),
      });
    }
  }
  doctypes.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { doctypes, problems };
}
