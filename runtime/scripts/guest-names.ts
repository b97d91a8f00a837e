// What a guest context holds besides the frappe global: the language features it is built with, and the names of
// every built-in reachable from its global object, which straight-line.ts denies to inline scripts.
import type { QuickJSWASMModule } from 'quickjs-emscripten';

/** Only these language features exist in a guest: no typed arrays (no SharedArrayBuffer or Atomics), no Proxy. */
export const INTRINSICS = {
  BaseObjects: true,
  Date: true,
  Eval: true,
  StringNormalize: true,
  RegExp: true,
  JSON: true,
  MapSet: true,
  Promise: true,
} as const;

/** Accessors whose value is a primitive and whose names scripts use for their own data. */
const ACCESSORS_ALLOWED = ['description', 'size', 'source', 'flags', 'global', 'byteLength'];

/**
 * The names a straight-line script may not use as a member or key: every own property of the guest's built-ins (walked
 * from a bare context's global object) whose value is an object or function, and every accessor but those listed.
 */
export function guestNames(module: QuickJSWASMModule): string[] {
  const rt = module.newRuntime();
  const ctx = rt.newContext({ intrinsics: INTRINSICS });
  try {
    const walk = `(() => { const allow = new Set(${JSON.stringify(ACCESSORS_ALLOWED)}); const deny = new Set();
      const seen = new Set([globalThis]); const queue = [globalThis];
      while (queue.length) { const o = queue.pop();
        for (const k of Object.getOwnPropertyNames(o)) { const d = Object.getOwnPropertyDescriptor(o, k);
          if (!('value' in d)) { if (!allow.has(k)) deny.add(k); continue; }
          const v = d.value;
          if ((typeof v === 'object' && v !== null) || typeof v === 'function') {
            deny.add(k); if (!seen.has(v)) { seen.add(v); queue.push(v); } } }
        const p = Object.getPrototypeOf(o); if (p && !seen.has(p)) { seen.add(p); queue.push(p); } }
      return JSON.stringify([...deny]); })()`;
    const value = ctx.unwrapResult(ctx.evalCode(walk, 'names.js'));
    const names = JSON.parse(ctx.getString(value)) as string[];
    value.dispose();
    return names;
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}
