// Loads a generated registry (generated/index.ts by default) at run time: through the start-up bundle when it can be
// built (see registry-bundle.ts), else the TypeScript modules directly. SVC_BUNDLE=0 turns the bundle off.
import path from 'node:path';
import type { Registry } from '../registry/registry';
import { requireBundle } from './bundle-code-cache';
import { ensureRegistryBundle } from './registry-bundle';

/** Requires the registry of a generated folder and returns it. */
export async function loadRegistry(dir = process.env.SVC_GENERATED ?? 'generated'): Promise<Registry> {
  const bundle = process.env.SVC_BUNDLE === '0' ? undefined : await ensureRegistryBundle(dir);
  const mod = (bundle ? requireBundle(bundle) : require(path.resolve(dir, 'index.ts'))) as {
    registry?: Registry;
  };
  if (!mod.registry) throw new Error(`${dir}/index.ts has no registry: run \`npm run generate\``);
  return mod.registry;
}
