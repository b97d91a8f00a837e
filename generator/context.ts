// The generator context: every option and derived lookup resolved once, passed to each emitter.
import path from 'node:path';
import type { MethodMap } from './methods/extract-methods';
import type { DocTypeIR } from './normalize';

/** Everything an emitter may read besides the DocType it emits. */
export interface GeneratorContext {
  /** Output folder, relative to the working directory (only used to compute controller imports). */
  outDir: string;
  /** All DocTypes of the set, sorted by name. */
  doctypes: DocTypeIR[];
  /** DocType name → IR. */
  byName: ReadonlyMap<string, DocTypeIR>;
  /** DocType name → its whitelisted methods (only DocTypes with a controller that has some). */
  methods: MethodMap;
}

/** Builds the context for one generator run. */
export function createContext(
  doctypes: DocTypeIR[],
  outDir: string,
  methods: MethodMap = new Map(),
): GeneratorContext {
  return { outDir, doctypes, byName: new Map(doctypes.map((d) => [d.meta.name, d])), methods };
}

/** Module specifier from a file at `fromRel` (inside outDir) to a source file (relative to cwd), without extension. */
export function importFromOut(ctx: GeneratorContext, fromRel: string, target: string): string {
  const fromDir = path.posix.dirname(path.posix.join(ctx.outDir.split(path.sep).join('/'), fromRel));
  let spec = path.posix.relative(fromDir, target.replace(/\.ts$/, ''));
  if (!spec.startsWith('.')) spec = `./${spec}`;
  return spec;
}

/** The package subpath generated code imports runtime support from. */
export const RUNTIME_INTERNAL = 'doctype-service/internal';
