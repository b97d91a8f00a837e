// Loads a QuickJS WebAssembly module whose memory is capped. QuickJS's own memory limit (setMemoryLimit) counts what
// malloc_usable_size reports, which this Emscripten build does not have: it counts 8 bytes a block, so a script filling
// large arrays grew the module's memory to 2 GB (issue #36). The module is given a WebAssembly.Memory of our own
// (quickjs-emscripten's `wasmMemory` variant option) with a maximum: past it malloc fails and QuickJS throws
// "out of memory", and the process never holds more than that maximum for one module. The WebAssembly is compiled once
// per process (the package's public `wasm` export) and handed to the workers, which then start on code V8 has already
// compiled and tiered up, not on its baseline code.
import { readFileSync } from 'node:fs';
import {
  RELEASE_SYNC,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';

/** A WebAssembly.Memory and a compiled WebAssembly.Module, as the variant options name them. */
type VariantOptions = Parameters<typeof newVariant>[1];
type WasmMemory = Extract<NonNullable<VariantOptions['wasmMemory']>, { buffer: unknown }>;
/** A compiled WebAssembly module (structured-cloneable to worker threads). */
export type WasmModule = Exclude<NonNullable<VariantOptions['wasmModule']>, () => unknown>;

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
const { Memory, Module } = (
  globalThis as typeof globalThis & {
    WebAssembly: {
      Memory: new (limits: { initial: number; maximum: number }) => WasmMemory;
      Module: new (bytes: Uint8Array) => WasmModule;
    };
  }
).WebAssembly;

let compiled: WasmModule | undefined;

/** QuickJS's WebAssembly, compiled once per thread that asks (the event loop; workers are handed its module). */
export function quickjsWasm(): WasmModule {
  compiled ??= new Module(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  return compiled;
}

/** A loaded module and the most memory it may ever hold. */
export interface BoundedModule {
  module: QuickJSWASMModule;
  maxBytes: number;
  /** The heap budget past the initial memory. */
  heapBytes: number;
}

/**
 * A new QuickJS module of `wasm` (compiled QuickJS, quickjsWasm) whose heap may grow by at most `heapBytes` past the
 * build's initial memory.
 */
export async function loadBoundedModule(heapBytes: number, wasm: WasmModule): Promise<BoundedModule> {
  const maxBytes = INITIAL_BYTES + Math.ceil(heapBytes / PAGE) * PAGE;
  const memory = new Memory({ initial: INITIAL_BYTES / PAGE, maximum: maxBytes / PAGE });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(VARIANT, { wasmMemory: memory, wasmModule: wasm }),
  );
  return { module, maxBytes, heapBytes };
}

/**
 * Whether `loaded` has used most of its heap budget: a failed allocation then is the budget's. Emscripten grows the
 * memory to what an allocation asks, so one that did not fit can leave up to its own size unused below the cap.
 */
export function memoryExhausted(loaded: BoundedModule): boolean {
  return loaded.module.getWasmMemory().buffer.byteLength >= loaded.maxBytes - loaded.heapBytes / 2;
}
