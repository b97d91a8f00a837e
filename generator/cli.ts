// `npm run generate` / `svc generate`: parse flags, run the pipeline, print problems and a one-line summary.
import { parseArgs } from 'node:util';
import { formatProblem, GeneratorProblems } from './problems';
import { ensureRegistryBundle } from '../runtime/cli/registry-bundle';
import { runGenerator } from './run-generator';

/** Usage text of `svc generate`. */
export const GENERATE_HELP = `Usage: svc generate [--doctypes DIR [DIR ...]] [--out DIR] [--quiet]

Reads every Frappe-format DocType JSON under the --doctypes folders (default: doctypes; give
several after one --doctypes, or repeat the flag)
and rewrites the --out folder (default: generated) with models, validators, routes,
OpenAPI documents and the registry. Exits 1 and lists every problem when a DocType is invalid.`;

/** The options of `svc generate`. */
export interface GenerateArgs {
  doctypes: string[];
  out: string;
  quiet: boolean;
  help: boolean;
}

/**
 * Reads the arguments of `svc generate`. `--doctypes` takes one folder per flag (`--doctypes A --doctypes B`) or
 * several after one flag (`--doctypes A B C`): a bare word belongs to the `--doctypes` before it. A bare word with no
 * `--doctypes` before it is an error, as is an unknown flag.
 */
export function parseGenerateArgs(argv: string[]): GenerateArgs {
  const { values, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: {
      doctypes: { type: 'string', multiple: true },
      out: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const doctypes: string[] = [];
  let afterDoctypes = false;
  for (const token of tokens) {
    if (token.kind === 'option') {
      afterDoctypes = token.name === 'doctypes';
      if (afterDoctypes && token.value !== undefined) doctypes.push(token.value);
    } else if (token.kind === 'positional') {
      if (!afterDoctypes)
        throw new TypeError(`Unexpected argument '${token.value}': folders follow --doctypes`);
      doctypes.push(token.value);
    } else afterDoctypes = false;
  }
  return {
    doctypes: doctypes.length ? doctypes : ['doctypes'],
    out: values.out ?? 'generated',
    quiet: values.quiet === true,
    help: values.help === true,
  };
}

/** Runs `svc generate` with the given arguments; returns the exit code. */
export async function generateCommand(argv: string[]): Promise<number> {
  const values = parseGenerateArgs(argv);
  if (values.help) {
    console.log(GENERATE_HELP);
    return 0;
  }
  const started = process.hrtime.bigint();
  try {
    const { out } = values;
    const result = await runGenerator({ doctypes: values.doctypes, out });
    // Prepares the start-up bundle now, so the first `svc serve` does not pay for it (a cache; failure is not an error).
    await ensureRegistryBundle(out).catch(() => undefined);
    if (!values.quiet) for (const w of result.warnings) console.warn(formatProblem(w));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(
      `generated ${result.doctypeCount} DocTypes: ${result.written} of ${result.files.size} files written in ${ms.toFixed(0)} ms` +
        (result.warnings.length ? ` (${result.warnings.length} warnings)` : ''),
    );
    return 0;
  } catch (err) {
    if (err instanceof GeneratorProblems) {
      for (const p of err.problems) console.error(formatProblem(p));
      console.error(
        `generation failed: ${err.problems.filter((p) => p.severity === 'error').length} error(s)`,
      );
      return 1;
    }
    throw err;
  }
}

if (require.main === module) {
  generateCommand(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
