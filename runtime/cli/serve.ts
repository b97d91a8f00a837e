// Serving and stopping: the HTTP server with the site config's timeouts, and a shutdown on SIGTERM/SIGINT that
// stops accepting, answers the requests in flight and those arriving on open keep-alive sockets within 250 ms with
// `Connection: close`, then closes idle keep-alive sockets, runs the
// shutdown hooks (job workers: running jobs stop after their current items and go back to the queue), flushes the request log, checkpoints and closes the database, and exits within
// `shutdown_timeout` whatever the clients do.
import http from 'node:http';
import net from 'node:net';
import type Koa from 'koa';
import { closeSite } from '../bootstrap';
import { InFlightResponses } from '../lifecycle/in-flight';
import { runShutdownHooks } from '../lifecycle/shutdown-hooks';
import { logger } from '../log/logger';
import { answerClientError } from '../http/client-error';
import type { Site } from '../site';

/** The site config keys of the HTTP server (ms). */
export interface ServerTimeouts {
  headers_timeout: number;
  request_timeout: number;
  keep_alive_timeout: number;
  shutdown_timeout: number;
}

/** A running server and its shutdown. */
export interface Served {
  server: http.Server;
  /** Stops as on SIGTERM; resolves with the exit code once everything is closed (or the deadline passed). */
  shutdown(reason: string): Promise<number>;
}

/** Listens on host:port with the timeouts; `onSignal` (default: shut down, then exit) runs on SIGTERM and SIGINT. */
export function serve(
  app: Koa,
  site: Site,
  where: { host: string; port: number },
  timeouts: ServerTimeouts,
  onListening: () => void,
): Served {
  let closing = false;
  const handler = app.callback();
  const inFlight = new InFlightResponses();
  const server = http.createServer((req, res) => {
    inFlight.add(res);
    // Once shutting down, every answer ends its connection.
    if (closing) res.setHeader('Connection', 'close');
    void handler(req, res);
  });
  server.on('clientError', answerClientError);
  server.headersTimeout = timeouts.headers_timeout;
  server.requestTimeout = timeouts.request_timeout;
  server.keepAliveTimeout = timeouts.keep_alive_timeout;
  server.listen(where.port, where.host, onListening);

  let done: Promise<number> | undefined;
  const shutdown = (reason: string): Promise<number> =>
    (done ??= (async () => {
      const started = Date.now();
      const deadline = started + timeouts.shutdown_timeout;
      closing = true;
      logger().info({ event: 'shutdown', reason, in_flight: inFlight.size }, 'shutting down');
      // The hooks (job workers) start now, alongside the drain: a running job stops after its current items.
      const hooks = runShutdownHooks(deadline - 500);
      for (const res of inFlight.snapshot()) if (!res.headersSent) res.setHeader('Connection', 'close');
      // Stop listening, without http.Server#close: it would also close every idle keep-alive socket at once, and a
      // request its client has just sent on one would be reset (answered by nothing). Such a request is answered
      // (with `Connection: close`) if it arrives within LAST_REQUESTS_MS; sockets still idle then are closed.
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(LAST_REQUESTS_MS, timeouts.shutdown_timeout / 4)),
      );
      server.closeIdleConnections();
      // Sockets that finish a response become idle: close them as they do, until the server is closed.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const overdue = new Promise<'overdue'>((resolve) =>
        setTimeout(() => resolve('overdue'), Math.max(0, deadline - Date.now() - 1000)).unref(),
      );
      const outcome = await Promise.race([closed.then(() => 'closed' as const), overdue]);
      clearInterval(sweep);
      if (outcome === 'overdue') {
        logger().warn({ event: 'shutdown_forced', open: inFlight.size }, 'closing connections still open');
        server.closeAllConnections();
      }
      return finishShutdown(site, await hooks, started, deadline);
    })());

  return { server, shutdown };
}

/** How long a keep-alive socket may still bring a request once the server stops listening. */
const LAST_REQUESTS_MS = 250;

/** Installs SIGTERM/SIGINT: the first shuts down and exits; a second exits at once. */
export function exitOnSignals(served: Pick<Served, 'shutdown'>): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    void served.shutdown(signal).then((code) => process.exit(code));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (process.env.npm_command === 'exec') watchParent(() => onSignal('SIGTERM'));
}

/**
 * Under `npx svc …` (npm exec), npm passes a SIGTERM to the shell it started, which dies without passing it on, and
 * this process would serve on as an orphan: a parent that goes away is taken as the signal. Only under npm exec: a
 * server started in the background of a shell that then exits (`nohup`) keeps serving.
 */
function watchParent(onGone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, 250).unref();
}

/** Stops a process without a server (`svc worker`): runs the shutdown hooks, then closes the site, by the deadline. */
export async function stopWorker(site: Site, reason: string, shutdownMs: number): Promise<number> {
  const started = Date.now();
  const deadline = started + shutdownMs;
  logger().info({ event: 'shutdown', reason }, 'stopping the job worker');
  return finishShutdown(site, await runShutdownHooks(deadline - 500), started, deadline);
}

/**
 * The end of every shutdown, once the hooks have run (`late`: those that overran): closes the site (request log,
 * checkpoint, database) but never past the deadline, logs the outcome and flushes the log; returns the exit code.
 */
async function finishShutdown(
  site: Site,
  late: string[],
  started: number,
  deadline: number,
): Promise<number> {
  if (late.length) logger().warn({ event: 'shutdown_hooks_late', hooks: late }, 'shutdown hooks overran');
  await Promise.race([
    closeSite(site).catch((err: unknown) =>
      logger().error({ event: 'shutdown_close_failed', err: String(err) }, 'closing the site failed'),
    ),
    new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref()),
  ]);
  logger().info({ event: 'shutdown_done', ms: Date.now() - started }, 'stopped');
  logger().flush?.();
  return 0;
}
