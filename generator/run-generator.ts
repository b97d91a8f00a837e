// The generator pipeline: load → validate → normalize → extract methods → emit → write.
import { createContext } from './context';
import { emitAll } from './emit';
import { loadDocTypes } from './load-doctypes';
import { extractMethods } from './methods/extract-methods';
import { normalizeDocTypes } from './normalize';
import { GeneratorProblems, type Problem } from './problems';
import { validateDocTypes } from './validate-doctypes';
import { writeFileMap, type FileMap } from './write/file-map';

/** Options of one generator run. */
export interface GeneratorOptions {
  /** Folders holding DocType JSON files. */
  doctypes: string[];
  /** Output folder. */
  out: string;
  cwd?: string;
}

/** What a run produced. */
export interface GeneratorResult {
  doctypeCount: number;
  files: FileMap;
  written: number;
  warnings: Problem[];
}

/** Builds the file map without touching the output folder (load, validate, normalize, emit). */
export async function buildFiles(options: GeneratorOptions): Promise<Omit<GeneratorResult, 'written'>> {
  const loaded = await loadDocTypes(options.doctypes, options.cwd);
  const problems = [...loaded.problems, ...validateDocTypes(loaded.doctypes)];
  if (problems.some((p) => p.severity === 'error')) throw new GeneratorProblems(problems);
  const doctypes = normalizeDocTypes(loaded.doctypes);
  const extracted = extractMethods(doctypes, options.cwd);
  problems.push(...extracted.problems);
  if (problems.some((p) => p.severity === 'error')) throw new GeneratorProblems(problems);
  const ctx = createContext(doctypes, options.out, extracted.methods);
  return { doctypeCount: ctx.doctypes.length, files: await emitAll(ctx), warnings: problems };
}

/** Runs the whole pipeline and writes the output folder. */
export async function runGenerator(options: GeneratorOptions): Promise<GeneratorResult> {
  const built = await buildFiles(options);
  const written = await writeFileMap(built.files, options.out);
  return { ...built, written };
}
