// Captures the process log (pino JSON lines) for a test: installs a logger writing into an array, and restores the
// previous one.
import { Writable } from 'node:stream';
import { createLogger, logger, setLogger } from '../../runtime/log/logger';

/** The lines logged since `captureLog()`, parsed; `restore()` puts the previous logger back. */
export interface CapturedLog {
  lines: Record<string, unknown>[];
  restore(): void;
}

/** Routes the process log into `lines` at `level` (default info). */
export function captureLog(level = 'info'): CapturedLog {
  const previous = logger();
  const lines: Record<string, unknown>[] = [];
  setLogger(
    createLogger({
      level,
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean))
            lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    }),
  );
  return { lines, restore: () => setLogger(previous) };
}
