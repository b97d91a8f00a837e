// Polling shared by the tests of Server Script changes across processes: the bound a change must meet, and a poll.
import { CHECK_MS } from '../../runtime/scripts/script-store';

/** The bound: the check's period, its two reads and the polling's own step, with room for a busy shared machine. */
export const BOUND_MS = CHECK_MS + 1000;

/** Polls `read` until it answers `want` (or BOUND_MS + 3 s pass); the milliseconds it took, or Infinity. */
export async function until(
  read: () => Promise<unknown>,
  want: unknown,
): Promise<{ ms: number; last: unknown }> {
  const start = Date.now();
  let last: unknown;
  while (Date.now() - start < BOUND_MS + 3000) {
    last = await read();
    if (last === want) return { ms: Date.now() - start, last };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ms: Infinity, last };
}
