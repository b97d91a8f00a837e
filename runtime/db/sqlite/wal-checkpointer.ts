// WAL checkpoints in a worker thread: copying the write-ahead log back into the database file, and the fsyncs that go
// with it, mostly leave the event loop, which only restarts the log now and then with little left to copy.
import { Worker } from 'node:worker_threads';

/**
 * Pages the WAL may reach before the write connection checkpoints by itself. Under sustained writes the worker's
 * PASSIVE checkpoints copy nearly every frame but can never restart the log (new frames land while they run), so the
 * writer does that at this size, with little left to copy; 2,000 pages (8 MB) cost no throughput against 8,000.
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 2000;

/** How often the worker checkpoints, in ms. */
const INTERVAL_MS = 100;

// Plain JavaScript run by the worker (eval), so that it needs neither tsx nor the runtime bundle.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
if (workerData.cacheKb !== undefined) db.pragma('cache_size = ' + -Math.floor(workerData.cacheKb));
db.pragma('busy_timeout = 1000');
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const run = () => {
  try {
    checkpoint.get();
  } catch {
    // busy or failing: the next tick retries, and the connections of the event loop checkpoint at the fallback limit
  }
};
const timer = setInterval(run, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  run();
  db.close();
  parentPort.postMessage('stopped');
});
`;

/** A running checkpointer. */
export interface WalCheckpointer {
  /** Runs a last checkpoint, closes the worker's connection and ends the thread. */
  stop(): Promise<void>;
}

/**
 * Starts a worker thread with its own connection to `file` that runs `PRAGMA wal_checkpoint(PASSIVE)` every 100 ms
 * (it copies what it can without waiting for readers or writers). The connections of the event loop keep an
 * autocheckpoint at FALLBACK_AUTOCHECKPOINT_PAGES: it restarts the log under sustained writes, and takes over the
 * copying if the worker has died.
 */
export function startWalCheckpointer(file: string, cacheKb?: number): WalCheckpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver: require.resolve('better-sqlite3'), intervalMs: INTERVAL_MS, cacheKb },
  });
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  // A worker that fails leaves the checkpoints to the fallback: never a reason to stop serving.
  worker.on('error', () => undefined);
  return {
    async stop() {
      if (exited) return;
      const stopped = new Promise<void>((resolve) => worker.once('message', () => resolve()));
      worker.postMessage('stop');
      await Promise.race([stopped, exit, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      await worker.terminate();
    },
  };
}
