// Loads a generated registry (generated/index.ts by default) at run time.
import path from 'node:path';
import type { Registry } from '../registry/registry';

/** Requires `<dir>/index.ts` of a generated folder and returns its registry. */
export function loadRegistry(dir = process.env.SVC_GENERATED ?? 'generated'): Registry {
  const mod = require(path.resolve(dir, 'index.ts')) as { registry?: Registry };
  if (!mod.registry) throw new Error(`${dir}/index.ts has no registry: run \`npm run generate\``);
  return mod.registry;
}
