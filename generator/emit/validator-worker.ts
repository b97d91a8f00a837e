// A validator thread (validator-threads.ts): claims schemas off the shared counter, largest first, compiles each and
// posts the code of all it compiled in one message when none is left.
import { parentPort, workerData } from 'node:worker_threads';
import type { JsonSchema } from '../json-schema';
import { validatorCode } from './validator-code';

/** What a validator thread is given. */
export interface ValidatorWorkerInput {
  schemas: JsonSchema[];
  /** Indexes into `schemas` in the order they are claimed. */
  order: number[];
  /** One Int32: the next position of `order` to claim, shared by every thread and the main thread. */
  next: SharedArrayBuffer;
}

/** What a validator thread posts: [index into schemas, validator code] per schema it compiled. */
export type ValidatorWorkerOutput = Array<[number, string]>;

const { schemas, order, next } = workerData as ValidatorWorkerInput;
const claim = new Int32Array(next);
const compiled: ValidatorWorkerOutput = [];
for (let k = Atomics.add(claim, 0, 1); k < order.length; k = Atomics.add(claim, 0, 1)) {
  const index = order[k] as number;
  try {
    compiled.push([index, validatorCode(schemas[index] as JsonSchema)]);
  } catch {
    // Left out: the main thread compiles what no thread returned, and so throws this error where it is caught.
  }
}
parentPort?.postMessage(compiled);
