// The validator cache: compiled validator code stored by what it was compiled from, so that a run skips ajv's compile
// (the largest cost of generating: about 2 s of CPU for the 766 fixture DocTypes) for every body schema it compiled
// before. One file per key under node_modules/.cache/doctype-service/validators, whatever the output folder, so runs
// into different folders share it; entries no run has used for a week are removed when a run stores new ones. Reads are
// synchronous: a run asks for every DocType's entry, and awaiting those 766 calls one by one cost about 0.2 s for the
// fixtures, with nothing else to do meanwhile; new entries are written while the run writes its output (save).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where the entries live: beside the node_modules ajv is installed in (from the sources and from dist/ alike). */
export const VALIDATOR_CACHE_DIR = path.join(
  path.dirname(require.resolve('ajv/package.json')),
  '..',
  '.cache',
  'doctype-service',
  'validators',
);
const MAX_IDLE_MS = 7 * 24 * 3600 * 1000;

/** Compiled validator code by schema: what emitAll asks before compiling, and tells after. */
export interface ValidatorCodeCache {
  get(schema: Record<string, unknown>): string | undefined;
  put(schema: Record<string, unknown>, code: string): void;
}

/**
 * What the code depends on besides the schema: the ajv release and the code that calls ajv and restyles its output
 * (their source text, so an edit to any of them gives every schema a new key).
 */
function compilerFingerprint(): string {
  const hash = createHash('sha256').update((require('ajv/package.json') as { version: string }).version);
  for (const module of ['./ts/ajv-standalone', './ts/ajv-style', './emit/validator-code'])
    hash.update(readFileSync(require.resolve(module)));
  return hash.digest('hex');
}

/** The validator cache on disk; `save` stores what the run compiled and marks what it used. */
export interface DiskValidatorCache extends ValidatorCodeCache {
  save(): Promise<void>;
}

/** The validator cache in `dir`. */
export function diskValidatorCache(dir = VALIDATOR_CACHE_DIR): DiskValidatorCache {
  const fingerprint = compilerFingerprint();
  const keyOf = (schema: Record<string, unknown>) =>
    createHash('sha256').update(fingerprint).update(JSON.stringify(schema)).digest('hex');
  const used = new Set<string>();
  const added = new Map<string, string>();
  return {
    get(schema) {
      const key = keyOf(schema);
      let code: string;
      try {
        code = readFileSync(path.join(dir, `${key}.js`), 'utf8');
      } catch {
        return undefined;
      }
      used.add(key);
      return code;
    },
    put(schema, code) {
      added.set(keyOf(schema), code);
    },
    // A cache: a folder it cannot write costs the next run time, never output, so failures are not errors. The new
    // entries are written on libuv's threads, started before the run writes its output folder and awaited after it: on
    // a cold run (766 new files for the fixtures) the two sets of writes overlap.
    async save() {
      try {
        mkdirSync(dir, { recursive: true });
        const now = new Date();
        for (const key of used) {
          try {
            utimesSync(path.join(dir, `${key}.js`), now, now);
          } catch {
            // removed meanwhile by another run: stored again when next compiled
          }
        }
        // Under a temporary name, then renamed: a run beside this one reads a whole entry or none.
        const store = async (key: string, code: string) => {
          const tmp = path.join(dir, `${key}.${process.pid}.tmp`);
          await writeFile(tmp, code);
          await rename(tmp, path.join(dir, `${key}.js`));
        };
        await Promise.all([...added].map(([key, code]) => store(key, code)));
        if (added.size === 0) return;
        for (const name of readdirSync(dir)) {
          const file = path.join(dir, name);
          const stat = statSync(file, { throwIfNoEntry: false });
          if (stat && now.getTime() - stat.mtimeMs > MAX_IDLE_MS) rmSync(file, { force: true });
        }
      } catch {
        // see above
      }
    },
  };
}
