// The generator pipeline: load → validate → normalize → extract methods → emit → write (and store the validator cache).
import { createContext } from './context';
import { emitAll } from './emit';
import { loadDocTypes } from './load-doctypes';
import type { MethodMap } from './methods/extract-methods';
import { normalizeDocTypes, type DocTypeIR } from './normalize';
import { GeneratorProblems, type Problem } from './problems';
import { diskValidatorCache, type DiskValidatorCache } from './validator-cache';
import { validateDocTypes } from './validate-doctypes';
import { writeFileMap, type FileMap } from './write/file-map';

/** Options of one generator run. */
export interface GeneratorOptions {
  /** Folders holding DocType JSON files. */
  doctypes: string[];
  /** Output folder. */
  out: string;
  cwd?: string;
  /** Reuse and store compiled validators (generator/validator-cache.ts); default true. */
  validatorCache?: boolean;
}

/** What a run produced. */
export interface GeneratorResult {
  doctypeCount: number;
  files: FileMap;
  written: number;
  warnings: Problem[];
}

/** What buildFiles made: the result without the write, and the validator cache to store after writing. */
export type BuiltFiles = Omit<GeneratorResult, 'written'> & { validatorCache?: DiskValidatorCache };

/**
 * The whitelisted methods of the DocTypes' controllers. ts-morph (with the TypeScript compiler it bundles: about 0.8 s
 * of CPU to load) is required only when some DocType has a controller to read.
 */
function readMethods(doctypes: DocTypeIR[], cwd?: string): { methods: MethodMap; problems: Problem[] } {
  if (!doctypes.some((ir) => ir.loaded.controller)) return { methods: new Map(), problems: [] };
  const { extractMethods } =
    require('./methods/extract-methods') as typeof import('./methods/extract-methods');
  return extractMethods(doctypes, cwd);
}

/** Builds the file map without touching the output folder (load, validate, normalize, emit). */
export async function buildFiles(options: GeneratorOptions): Promise<BuiltFiles> {
  const loaded = loadDocTypes(options.doctypes, options.cwd);
  const problems = [...loaded.problems, ...validateDocTypes(loaded.doctypes)];
  if (problems.some((p) => p.severity === 'error')) throw new GeneratorProblems(problems);
  const doctypes = normalizeDocTypes(loaded.doctypes);
  const extracted = readMethods(doctypes, options.cwd);
  problems.push(...extracted.problems);
  if (problems.some((p) => p.severity === 'error')) throw new GeneratorProblems(problems);
  const ctx = createContext(doctypes, options.out, extracted.methods);
  const validatorCache = options.validatorCache === false ? undefined : diskValidatorCache();
  const files = await emitAll(ctx, validatorCache);
  return { doctypeCount: ctx.doctypes.length, files, warnings: problems, validatorCache };
}

/** Runs the whole pipeline and writes the output folder. */
export async function runGenerator(options: GeneratorOptions): Promise<GeneratorResult> {
  const { validatorCache, ...result } = await buildFiles(options);
  const saved = validatorCache?.save();
  const written = writeFileMap(result.files, options.out);
  await saved;
  return { ...result, written };
}
