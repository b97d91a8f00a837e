// Where the command line finds the generated registry and the DocType folder: beside the sources (`generated`,
// `doctypes`, relative to the working directory) when running the TypeScript through tsx, and inside dist/ when running
// the compiled JavaScript of `npm run build`. SVC_GENERATED and SVC_DOCTYPES override both. This file is never part of
// the runtime bundle (runtime/cli is left out of it), so its own file name tells which way it runs.
import path from 'node:path';

/** True when this process runs the compiled JavaScript of dist/ (npm run build), not the TypeScript sources. */
export const COMPILED = !__filename.endsWith('.ts');

/** dist/ when compiled (this file is dist/runtime/cli/layout.js). */
const COMPILED_ROOT = path.resolve(__dirname, '..', '..');

/** The generated folder the server loads. */
export function generatedDir(): string {
  return process.env.SVC_GENERATED ?? (COMPILED ? path.join(COMPILED_ROOT, 'generated') : 'generated');
}

/** The DocType folder whose `hooks` module gives the auth hooks. */
export function doctypesDir(): string {
  return process.env.SVC_DOCTYPES ?? (COMPILED ? path.join(COMPILED_ROOT, 'doctypes') : 'doctypes');
}

/** The project root, where patches.txt and the patch modules are: the working directory (SVC_ROOT overrides it). */
export function projectRoot(): string {
  return path.resolve(process.env.SVC_ROOT ?? '.');
}

/** dist/ when compiled, where npm run build compiles patches/ (patch modules are looked for there first); else none. */
export function compiledPatchesRoot(): string | undefined {
  return COMPILED ? COMPILED_ROOT : undefined;
}
