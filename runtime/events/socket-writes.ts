// One system call per flush of a websocket's packets, not one per packet. Engine.IO hands a socket's waiting packets
// to `ws` together (its `flush` event), and `ws` writes each frame to the TCP socket at once: a burst of events to
// 1,000 sockets was one writev per event per socket, the largest cost of a fan-out (profiled: bench/realtime.ts).
// While a flush runs its TCP socket is corked, and uncorked once the flush's synchronous writes are done, so the
// frames go out in one writev. Public API only: Engine.IO's `flush` event and the `headers` event of its upgrade
// requests (whose `req.socket` is the TCP socket the websocket writes to), Node's Writable cork / uncork.
import type { IncomingMessage } from 'node:http';
import type { Socket as TcpSocket } from 'node:net';
import type { Server } from 'socket.io';

/** An Engine.IO connection, as far as this module uses it. */
interface EngineConnection {
  id: string;
  request: IncomingMessage;
  transport: { name: string };
  on(event: 'flush' | 'upgrade' | 'close', listener: () => void): void;
}

/** Corks each websocket's TCP socket for the length of every flush of its packets. */
export function batchSocketWrites(io: Server): void {
  /** The TCP socket of each websocket upgrade of a polling session, by session id, until the upgrade completes. */
  const upgrades = new Map<string, TcpSocket>();
  io.engine.on('headers', (_headers: unknown, req: IncomingMessage) => {
    const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sid');
    if (sid && req.headers.upgrade) upgrades.set(sid, req.socket);
  });
  io.engine.on('connection', (conn: EngineConnection) => {
    // A client that connects with the websocket at once: its handshake is the upgrade request.
    let tcp: TcpSocket | undefined = conn.transport.name === 'websocket' ? conn.request.socket : undefined;
    conn.on('upgrade', () => {
      tcp = upgrades.get(conn.id);
      upgrades.delete(conn.id);
    });
    conn.on('close', () => upgrades.delete(conn.id));
    conn.on('flush', () => {
      const socket = tcp;
      if (!socket || socket.destroyed) return;
      socket.cork();
      process.nextTick(() => socket.uncork());
    });
  });
}
