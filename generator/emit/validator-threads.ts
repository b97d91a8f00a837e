// Compiles DocType body validators on worker threads while the main thread emits the other files. ajv's compile is
// most of the emit phase for large sets (about 2 s of CPU for the 766 fixture DocTypes), and each validator is compiled
// by an ajv instance of its own, so the code does not depend on the thread that compiled it.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { JsonSchema } from '../json-schema';
import { validatorCode } from './validator-code';
import type { ValidatorWorkerInput, ValidatorWorkerOutput } from './validator-worker';

/** Below this many schemas a thread's start-up (tsx and ajv, ~0.2 s) costs more than it saves. */
const MIN_SCHEMAS_FOR_THREADS = 64;

/** Validator threads for `count` schemas: one per core beside the main thread, none for a small set. */
export function validatorThreads(count: number): number {
  return count < MIN_SCHEMAS_FOR_THREADS ? 0 : Math.max(0, availableParallelism() - 1);
}

// Plain JavaScript run by each thread (eval): it loads the worker module through tsx's public register API when the
// generator runs from TypeScript (the thread inherits no loader from tsx's CLI, bin/svc.js or jest), or as compiled.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
require(workerData.module);
`;

/** What compileValidators made: the code of every schema in the order given, and how many came from the threads. */
export interface CompiledValidators {
  codes: string[];
  onThreads: number;
}

/** Validator code being compiled; `finish` compiles what is left on this thread and returns it all. */
export interface ValidatorCompilation {
  finish(): Promise<CompiledValidators>;
}

/** Runs one validator thread; resolves with what it compiled, or nothing when it failed or ended without answering. */
function runThread(input: ValidatorWorkerInput): Promise<ValidatorWorkerOutput> {
  const module = require.resolve('./validator-worker');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    execArgv: [],
    workerData: {
      ...input,
      module,
      tsx: module.endsWith('.ts') ? require.resolve('tsx/cjs/api') : undefined,
    },
  });
  return new Promise((resolve) => {
    let answer: ValidatorWorkerOutput = [];
    worker.on('message', (compiled: ValidatorWorkerOutput) => (answer = compiled));
    worker.on('error', () => undefined);
    worker.on('exit', () => resolve(answer));
  });
}

/**
 * Starts compiling `schemas` on `threads` worker threads; the schemas go largest first, so no thread is left with a big
 * one at the end. The main thread joins in when it calls `finish`, and compiles any schema a thread did not return
 * (so a thread that fails costs time, never output, and an error in a schema is thrown here). With `joinIn` false the
 * main thread only waits for the threads (a test's way to have them compile everything).
 */
export function compileValidators(
  schemas: JsonSchema[],
  threads = validatorThreads(schemas.length),
  { joinIn = true } = {},
): ValidatorCompilation {
  const sizes = schemas.map((schema) => JSON.stringify(schema).length);
  const order = schemas.map((_, i) => i).sort((a, b) => (sizes[b] as number) - (sizes[a] as number) || a - b);
  const next = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const running = Array.from({ length: threads }, () => runThread({ schemas, order, next }));
  return {
    async finish() {
      const codes = new Array<string | undefined>(schemas.length).fill(undefined);
      const claim = new Int32Array(next);
      while (joinIn) {
        const k = Atomics.add(claim, 0, 1);
        if (k >= order.length) break;
        const index = order[k] as number;
        codes[index] = validatorCode(schemas[index] as JsonSchema);
      }
      let onThreads = 0;
      for (const compiled of await Promise.all(running))
        for (const [index, code] of compiled) {
          codes[index] = code;
          onThreads++;
        }
      return {
        codes: codes.map((code, index) => code ?? validatorCode(schemas[index] as JsonSchema)),
        onThreads,
      };
    },
  };
}
