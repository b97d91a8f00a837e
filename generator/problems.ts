// Problems found in DocType files: collected across all files, reported together.

/** One problem at an exact place: the DocType file and a JSON pointer inside it. */
export interface Problem {
  /** File path as given to the generator (relative to the working directory). */
  file: string;
  /** RFC 6901 JSON pointer, '' for the whole file. */
  pointer: string;
  message: string;
  /** Errors stop generation; warnings are printed and generation goes on. */
  severity: 'error' | 'warning';
}

/** Renders a problem as `file#pointer: message`. */
export function formatProblem(problem: Problem): string {
  return `${problem.severity}: ${problem.file}#${problem.pointer}: ${problem.message}`;
}

/** Thrown by the pipeline when any error-severity problem was found. */
export class GeneratorProblems extends Error {
  constructor(readonly problems: Problem[]) {
    super(
      `${problems.filter((p) => p.severity === 'error').length} problem(s) in DocType files:\n` +
        problems.map(formatProblem).join('\n'),
    );
    this.name = 'GeneratorProblems';
  }
}
