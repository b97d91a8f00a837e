// patches.txt, Frappe's layout: one dotted module path per line, in order, under `[pre_model_sync]` (run before the
// schema sync) or `[post_model_sync]` (after it). Lines before any section are pre_model_sync (Frappe's older files have
// no sections). `#` starts a comment line; text after ` #` on a patch line is part of the patch's key, so editing it
// makes the patch run again (as Frappe's Patch Log keys on the whole line).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PatchError } from '../errors/errors';

/** When a patch runs: before or after the schema sync. */
export type PatchPhase = 'pre_model_sync' | 'post_model_sync';

/** One patch line. */
export interface PatchLine {
  /** The line as written (comment included): the key recorded in the Patch Log. */
  key: string;
  /** The dotted module path (`patches.v1.rename_title`). */
  module: string;
  /** The module file, without extension (`<root>/patches/v1/rename_title`). */
  file: string;
  /** Where the compiled build has it, without extension (`dist/patches/v1/rename_title`): looked for first. */
  compiled?: string;
  /** Its line number in patches.txt (1-based). */
  line: number;
}

/** The patches of a project, by phase, in file order. */
export type PatchList = Record<PatchPhase, PatchLine[]>;

/** The file name of the patch list at the project root. */
export const PATCHES_FILE = 'patches.txt';

/** A section line; a comment may follow it. */
const SECTION = /^\[(\w+)\]\s*(?:#.*)?$/;
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Parses patches.txt text (`root`: the folder the dotted paths are relative to; `compiled`: the compiled build's folder,
 * looked in first); a malformed line is a PatchError.
 */
export function parsePatchList(text: string, root: string, compiled?: string): PatchList {
  const list: PatchList = { pre_model_sync: [], post_model_sync: [] };
  const seen = new Set<string>();
  let phase: PatchPhase = 'pre_model_sync';
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const section = SECTION.exec(line);
    if (section) {
      if (section[1] !== 'pre_model_sync' && section[1] !== 'post_model_sync')
        throw new PatchError(`${PATCHES_FILE}:${i + 1}: unknown section [${section[1]}]`);
      phase = section[1];
      return;
    }
    const module = (line.split('#', 1)[0] as string).trim();
    if (!DOTTED.test(module))
      throw new PatchError(`${PATCHES_FILE}:${i + 1}: "${line}" is not a dotted module path`);
    if (seen.has(line)) return;
    seen.add(line);
    const parts = module.split('.');
    list[phase].push({
      key: line,
      module,
      file: path.join(root, ...parts),
      ...(compiled ? { compiled: path.join(compiled, ...parts) } : {}),
      line: i + 1,
    });
  });
  return list;
}

/**
 * Reads `<root>/patches.txt`; no file is an empty list. Its dotted paths are found under the root, and first under
 * `compiled` when given (dist/ of the compiled build, where `npm run build` compiles the patches/ folder).
 */
export function readPatchList(root: string, compiled?: string): PatchList {
  const file = path.join(root, PATCHES_FILE);
  if (!existsSync(file)) return { pre_model_sync: [], post_model_sync: [] };
  return parsePatchList(readFileSync(file, 'utf8'), root, compiled);
}
