// A gate the back-link fixtures' controllers wait on inside their transaction, set by a test to hold one save or
// delete open while another runs: `holdAt` arms it for one hook, `entered` resolves when a document reaches it, and
// `release` lets it go on. The controllers and the test share this module through jest's module registry.
import type { Document } from 'doctype-service';

interface Gate {
  hook: string;
  entered: Promise<void>;
  reached: () => void;
  released: Promise<void>;
  release: () => void;
}

let gate: Gate | undefined;

/** Arms the gate for the next document that reaches `hook`. */
export function holdAt(hook: string): { entered: Promise<void>; release: () => void } {
  let reached!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  gate = { hook, entered, reached, released, release };
  return { entered, release };
}

/** Called by the controllers: waits while the gate is armed for `hook` (once; the gate is then disarmed). */
export async function passGate(hook: string, _doc: Document): Promise<void> {
  if (!gate || gate.hook !== hook) return;
  const held = gate;
  gate = undefined;
  held.reached();
  await held.released;
}
