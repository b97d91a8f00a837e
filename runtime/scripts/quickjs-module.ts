// Loads a QuickJS WebAssembly module whose memory is capped. QuickJS's own memory limit (setMemoryLimit) counts what
// malloc_usable_size reports, which this Emscripten build does not have: it counts 8 bytes a block, so a script filling
// large arrays grew the module's memory to 2 GB (issue #36). The module is given a WebAssembly.Memory of our own
// (quickjs-emscripten's `wasmMemory` variant option) with a maximum: past it malloc fails and QuickJS throws
// "out of memory", and the process never holds more than that maximum for one module.
import {
  RELEASE_SYNC,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';

/** A WebAssembly.Memory, as the variant option names it. */
type WasmMemory = Extract<NonNullable<Parameters<typeof newVariant>[1]['wasmMemory']>, { buffer: unknown }>;

/** WebAssembly pages are 64 KB. */
const PAGE = 64 * 1024;

/**
 * The build's initial memory: 16 MB (Emscripten's INITIAL_MEMORY, which its loader also uses when given no memory),
 * holding the static data, the 5 MB C stack and the first part of the heap. A smaller memory fails to instantiate.
 */
const INITIAL_BYTES = 16 * 1024 * 1024;

/**
 * The release build, its Emscripten module loaded with require: the variant's own loader uses import(), which a host
 * running this code through a CommonJS loader (jest's) may not offer.
 */
const VARIANT: QuickJSSyncVariant = {
  ...RELEASE_SYNC,
  importModuleLoader: () => {
    const loaded = require('@jitl/quickjs-wasmfile-release-sync/emscripten-module') as
      { default?: unknown } | ((...args: unknown[]) => unknown);
    const factory = typeof loaded === 'function' ? loaded : loaded.default;
    return Promise.resolve(factory as Awaited<ReturnType<QuickJSSyncVariant['importModuleLoader']>>);
  },
};

/** WebAssembly.Memory's constructor (the TypeScript lib in use declares the WebAssembly types, not the global). */
const { Memory } = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (limits: { initial: number; maximum: number }) => WasmMemory };
  }
).WebAssembly;

/** A loaded module and the most memory it may ever hold. */
export interface BoundedModule {
  module: QuickJSWASMModule;
  maxBytes: number;
}

/** A new QuickJS module whose heap may grow by at most `heapBytes` past the build's initial memory. */
export async function loadBoundedModule(heapBytes: number): Promise<BoundedModule> {
  const maxBytes = INITIAL_BYTES + Math.ceil(heapBytes / PAGE) * PAGE;
  const memory = new Memory({ initial: INITIAL_BYTES / PAGE, maximum: maxBytes / PAGE });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(VARIANT, { wasmMemory: memory }));
  return { module, maxBytes };
}

/** Whether `loaded` has grown its memory to the cap (an allocation past it failed, or is about to). */
export function memoryExhausted(loaded: BoundedModule): boolean {
  return loaded.module.getWasmMemory().buffer.byteLength >= loaded.maxBytes;
}
