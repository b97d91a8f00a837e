// Loads a generated registry (generated/index.ts by default) at run time: through the start-up bundle when it can be
// built (see registry-bundle.ts), else the TypeScript modules directly. SVC_BUNDLE=0 turns the bundle off. The compiled
// build (dist/) requires the bundle `npm run build` wrote (dist/generated/index.bundle.js), else dist/generated/index.js.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Registry } from '../registry/registry';
import { requireBundle } from './bundle-code-cache';
import { COMPILED, generatedDir } from './layout';
import { COMPILED_REGISTRY_BUNDLE, ensureRegistryBundle } from './registry-bundle';

/** Requires the registry of a generated folder and returns it. */
export async function loadRegistry(dir = generatedDir()): Promise<Registry> {
  const off = process.env.SVC_BUNDLE === '0';
  const compiledBundle = path.resolve(dir, COMPILED_REGISTRY_BUNDLE);
  const bundle = COMPILED || off ? undefined : await ensureRegistryBundle(dir);
  const mod = (
    bundle
      ? requireBundle(bundle)
      : // Through require: Node applies the bundle's source map beside it (npm start's --enable-source-maps).
        COMPILED && !off && existsSync(compiledBundle)
        ? require(compiledBundle)
        : require(path.resolve(dir, COMPILED ? 'index.js' : 'index.ts'))
  ) as {
    registry?: Registry;
  };
  if (!mod.registry) throw new Error(`${dir}/index.ts has no registry: run \`npm run generate\``);
  return mod.registry;
}
