// Runs a start-up bundle from V8's code cache: compiling the bundle of a large registry (18 MB for 766 DocTypes) is most
// of its load time (~0.35 s), from the cache ~0.05 s. The cache sits beside the bundle, stamped with the size and mtime
// of the bundle it was compiled from, because V8 checks only that the source length matches.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

type ModuleFunction = (
  exports: unknown,
  require: NodeRequire,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

function cachePath(bundle: string): string {
  return `${bundle}.v8cache`;
}

/** Identifies one written version of a file (a rename keeps both). */
export function fileStamp(file: string): string {
  const s = statSync(file);
  return `${s.size}:${s.mtimeMs}`;
}

/** Compiles bundle source as the body of a CommonJS module function, as Node's loader would. */
function compile(bundle: string, source: string, cachedData?: Buffer): vm.Script {
  return new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
  });
}

function writeCodeCache(bundle: string, stamp: string, script: vm.Script): void {
  const tmp = `${cachePath(bundle)}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${stamp}\n`), script.createCachedData()]));
    renameSync(tmp, cachePath(bundle));
  } catch {
    // A read-only cache folder: the bundle still runs, compiled each time.
  }
}

function readCodeCache(bundle: string, stamp: string): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(cachePath(bundle));
  } catch {
    return undefined;
  }
  const eol = data.indexOf(10);
  return eol > 0 && data.toString('latin1', 0, eol) === stamp ? data.subarray(eol + 1) : undefined;
}

/** Makes the code cache of a bundle just built from `source`; `stamp` is the bundle file's stamp. */
export function prepareCodeCache(bundle: string, stamp: string, source: string): void {
  writeCodeCache(bundle, stamp, compile(bundle, source));
}

/**
 * Runs a bundle as a CommonJS module and returns its exports, through the code cache when one was made from this very
 * file; otherwise compiles it and (re)makes the cache. Unlike `require`, the 18 MB file does not pass through the
 * TypeScript loader's hooks, which inspect every file they load.
 */
export function requireBundle(bundle: string): unknown {
  // Stamped before reading: a bundle replaced in between gets a cache that its next reader refuses, never a wrong one.
  const stamp = fileStamp(bundle);
  const source = readFileSync(bundle, 'utf8');
  const cachedData = readCodeCache(bundle, stamp);
  const script = compile(bundle, source, cachedData);
  const module = { exports: {} };
  (script.runInThisContext() as ModuleFunction).call(
    module.exports,
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    path.dirname(bundle),
  );
  if (!cachedData || script.cachedDataRejected) writeCodeCache(bundle, stamp, script);
  return module.exports;
}
