// Controller methods that look like lifecycle hooks but are not one (`on_udpate`): the runtime would never call them.
import { HOOKS } from '../../runtime/document/hooks';

const HOOK_SET: ReadonlySet<string> = new Set(HOOKS);

/** Levenshtein distance between two short names. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The hook a method name was probably meant to be, or undefined when it is a hook or does not look like one: a name
 * within two edits of a hook (`on_udpate`, `validte`, `onUpdate` spelled `on_Update`), or any `before_`, `after_` or
 * `on_` name that no hook has.
 */
export function misspelledHook(name: string): string | undefined {
  if (HOOK_SET.has(name)) return undefined;
  const lower = name.toLowerCase();
  let best: { hook: string; edits: number } | undefined;
  for (const hook of HOOKS) {
    const edits = distance(lower, hook);
    if (!best || edits < best.edits) best = { hook, edits };
  }
  if (!best) return undefined;
  const hookShaped = /^(before|after|on)_/.test(lower);
  return best.edits <= 2 || hookShaped ? best.hook : undefined;
}
