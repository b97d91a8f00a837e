// Work that must finish (or hand itself back) before the process exits: background job workers register here and
// are called once on SIGTERM/SIGINT, after the HTTP server stopped accepting and before the database closes.

/** A hook: finish or re-queue running work by `deadline` (ms since epoch); it is not awaited past it. */
export type ShutdownHook = (deadline: number) => Promise<void> | void;

const hooks = new Map<string, ShutdownHook>();

/** Registers (or replaces) the hook `name`; returns a function that removes it. */
export function onShutdown(name: string, hook: ShutdownHook): () => void {
  hooks.set(name, hook);
  return () => {
    if (hooks.get(name) === hook) hooks.delete(name);
  };
}

/** Runs every hook in parallel, each given the deadline; a hook that throws or overruns is left behind. */
export async function runShutdownHooks(deadline: number): Promise<string[]> {
  const late: string[] = [];
  await Promise.all(
    [...hooks].map(async ([name, hook]) => {
      const remaining = Math.max(0, deadline - Date.now());
      const timedOut = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), remaining).unref());
      const result = await Promise.race([Promise.resolve().then(() => hook(deadline)), timedOut]).catch(
        () => 'late' as const,
      );
      if (result === 'late') late.push(name);
    }),
  );
  return late;
}
