// A test site's app and realtime (socket.io) on a loopback port, and real socket.io clients of it, closed together.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import { attachRealtime } from '../../runtime/app';
import type { TestSite } from '../helpers/test-site';

/** The server and its clients. */
export interface RealtimeTestServer {
  port: number;
  /** Connects with these headers to `namespace`; resolves once connected, rejects with the connect_error. */
  open(headers?: Record<string, string>, namespace?: string): Promise<Socket>;
  /** Disconnects the clients and stops the server (the site stays open). */
  close(): Promise<void>;
}

/** Serves `t`'s app and realtime on a free loopback port. */
export async function startRealtime(t: TestSite): Promise<RealtimeTestServer> {
  const server = http.createServer(t.app.callback());
  const realtime = attachRealtime(server, t.site, { authHooks: [] });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const sockets: Socket[] = [];
  return {
    port,
    open(headers = {}, namespace = '/') {
      const socket = connect(`http://127.0.0.1:${port}${namespace}`, {
        path: '/socket.io',
        transports: ['websocket'],
        extraHeaders: headers,
        reconnection: false,
        forceNew: true,
      });
      sockets.push(socket);
      return new Promise((resolve, reject) => {
        socket.once('connect', () => resolve(socket));
        socket.once('connect_error', reject);
      });
    },
    async close() {
      for (const s of sockets) s.disconnect();
      realtime.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Collects what a socket receives of `event` (typed as the test reads it). */
export function collect<T = any>(socket: Socket, event: string): T[] {
  const got: T[] = [];
  socket.on(event, (payload: T) => got.push(payload));
  return got;
}

/** Resolves once `ready()` holds; rejects after `ms`. */
export async function until(ready: () => boolean, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; !ready();) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
