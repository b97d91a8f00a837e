// Realtime over socket.io 4, Frappe's wire: on the HTTP server's port, path /socket.io, namespaces `/` and
// `/<site_name>`. The handshake is authenticated as a request would be (the caller passes the authenticator: sid
// cookie, Authorization token/Basic/Bearer, auth hooks; no credentials is Guest, bad ones refuse the connection). The
// client's events are Frappe's (frappe/realtime/handlers): doctype_subscribe/unsubscribe, doc_subscribe/unsubscribe,
// doc_open/doc_close (→ doc_viewers), task_subscribe/unsubscribe (→ task_progress, task_complete). Read permission is
// checked when subscribing, for the user as of now (a refused subscription is ignored, as Frappe does; an optional ack
// callback is told), and again for every event (socket-rooms.ts). Every `realtime_recheck_ms` each socket's handshake
// is authenticated again: a socket whose session, token or key no longer signs its user in is disconnected.
import type http from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Server } from 'socket.io';
import { requestClientIp } from '../auth/client-ip';
import { asUnavailable } from '../db/unavailable';
import { AppError } from '../errors/errors';
import { onShutdown } from '../lifecycle/shutdown-hooks';
import { logger } from '../log/logger';
import { hasDocumentPermission } from '../permissions/document-permission';
import { hasDocTypePermission } from '../permissions/doctype-permission';
import type { SessionUser, Site } from '../site';
import { EventReadChecks } from './event-access';
import { connectionKey, holdConnection, stillHolds } from './realtime-connections';
import { listenForRealtime } from '../redis/realtime-channel';
import { batchSocketWrites } from './socket-writes';
import { docRoom, doctypeRoom, emitTo, SocketRooms, type RealtimeSocket } from './socket-rooms';
import { TaskWatch, taskRoom } from './task-progress';

/** Resolves the user of a handshake request (as a request's authentication would); throws to refuse it. */
export type HandshakeAuth = (req: IncomingMessage) => Promise<SessionUser>;

/** The socket.io server of a site. */
export interface RealtimeServer {
  io: Server;
  /** Disconnects every socket and stops following events and jobs (the HTTP server is left to its owner). */
  close(): void;
}

/** An ack callback a client may pass as the last argument: `{ok: true}` or `{ok: false, error}`. */
type Ack = (answer: { ok: boolean; error?: string }) => void;

const MAX_NAME = 140;

/** The site's name for the namespace check: site config `site_name`, else the handshake's Host without its port. */
function siteName(site: Site, req: IncomingMessage): string {
  const configured = site.config.site.site_name;
  if (configured) return configured;
  return String(req.headers.host ?? '').replace(/:\d+$/, '');
}

/** Splits a client event's arguments into its strings and its ack (a function last). */
function parseArgs(args: unknown[], count: number): { names: string[] | undefined; ack: Ack } {
  const last = args[args.length - 1];
  const ack: Ack = typeof last === 'function' ? (last as Ack) : () => undefined;
  const values = typeof last === 'function' ? args.slice(0, -1) : args;
  const names = values.slice(0, count);
  const valid =
    names.length === count && names.every((v) => typeof v === 'string' && v !== '' && v.length <= MAX_NAME);
  return { names: valid ? (names as string[]) : undefined, ack };
}

/** Serves socket.io on `server` for `site`. */
export function attachSocketServer(
  server: http.Server,
  site: Site,
  authenticate: HandshakeAuth,
  authenticateAgain: HandshakeAuth = authenticate,
): RealtimeServer {
  // Loaded by a process that serves sockets only (`svc worker`, the CLI and most tests never do).
  const { Server: SocketServer } = require('socket.io') as typeof import('socket.io');
  const io = new SocketServer(server, { path: '/socket.io', serveClient: false, maxHttpBufferSize: 100_000 });
  batchSocketWrites(io);
  const rooms = new SocketRooms(site);
  const tasks = new TaskWatch(site, rooms);
  const realtime = new SocketHandlers(site, rooms, tasks);

  const handshake = (socket: RealtimeSocket, next: (err?: Error) => void): void => {
    authenticate(socket.request).then(
      (user) => {
        let release: () => void;
        try {
          release = holdConnection(
            site,
            connectionKey(user, requestClientIp(socket.request, site.config.site.trusted_proxies ?? [])),
          );
        } catch (err) {
          const refused = new Error((err as AppError).message) as Error & { data?: unknown };
          refused.data = { status: 429, exc_type: 'TooManyRequestsError' };
          return next(refused);
        }
        socket.data = { user, rooms: new Set(), open: new Set(), release };
        next();
      },
      (thrown: unknown) => {
        // A database that cannot answer is 503, as over HTTP: good credentials are not called bad.
        const err = asUnavailable(thrown, site.db);
        const refused = new Error(
          err instanceof AppError ? err.message : 'Authentication failed',
        ) as Error & {
          data?: unknown;
        };
        refused.data = err instanceof AppError ? { status: err.status, exc_type: err.excType } : undefined;
        next(refused);
      },
    );
  };
  io.of('/').use(handshake);
  io.of('/').on('connection', (socket: RealtimeSocket) => realtime.connect(socket));
  const named = io.of(/^\/[^/]+$/);
  named.use((socket: RealtimeSocket, next) => {
    if (socket.nsp.name.slice(1) === siteName(site, socket.request)) return next();
    next(new Error(`Unknown namespace ${socket.nsp.name.slice(0, 200)}`));
  });
  named.use(handshake);
  named.on('connection', (socket: RealtimeSocket) => realtime.connect(socket));

  // frappe.publish_realtime: to the sockets of the room on this process (the others' get it through Redis).
  const stopMessages = listenForRealtime(site, (m) => {
    const members = rooms.members(m.room);
    if (members.size) emitTo([...members], m.event, m.message);
    else {
      io.of('/').to(m.room).emit(m.event, m.message);
      named.to(m.room).emit(m.event, m.message);
    }
  });
  const recheck = setInterval(
    () => void realtime.recheck(authenticateAgain),
    site.config.site.realtime_recheck_ms,
  );
  recheck.unref();
  const close = (): void => {
    stopMessages();
    clearInterval(recheck);
    rooms.close();
    tasks.close();
    io.disconnectSockets(true);
    // Every namespace's connections (the site's own namespace included) go with the engine's.
    io.engine.close();
  };
  const removeHook = onShutdown('realtime sockets', close);
  site.plugins.onClose('realtime sockets', close);
  return {
    io,
    close: () => {
      removeHook();
      close();
    },
  };
}

/** What a socket's events do. */
class SocketHandlers {
  /** The connected sockets of every namespace. */
  private readonly sockets = new Set<RealtimeSocket>();
  private rechecking = false;

  constructor(
    private readonly site: Site,
    private readonly rooms: SocketRooms,
    private readonly tasks: TaskWatch,
  ) {}

  /**
   * Authenticates every socket's handshake again, one after another: a refusal (401, 403) or another user disconnects
   * it; an outage leaves it to the next check. The user found replaces the socket's (its roles as of now).
   */
  async recheck(authenticate: HandshakeAuth): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      for (const socket of [...this.sockets]) {
        if (!socket.connected) continue;
        const user = await authenticate(socket.request).catch((err: unknown) =>
          stillHolds(err) ? null : undefined,
        );
        if (user === null) continue;
        if (user === undefined || user.name !== socket.data.user.name) socket.disconnect(true);
        else socket.data.user = user;
      }
    } finally {
      this.rechecking = false;
    }
  }

  /** The socket's user as of now (roles, enabled), undefined when disabled or gone since the handshake. */
  private currentUser(socket: RealtimeSocket): Promise<SessionUser | undefined> {
    return new EventReadChecks(this.site).user(socket.data.user.name);
  }

  connect(socket: RealtimeSocket): void {
    this.sockets.add(socket);
    // Frappe's own rooms, for frappe.publish_realtime: the user's, the website's, and `all` for signed-in users.
    const { name } = socket.data.user;
    void socket.join([`user:${name}`, 'website', ...(name === 'Guest' ? [] : ['all'])]);
    const on = (event: string, count: number, handle: (names: string[], ack: Ack) => Promise<void> | void) =>
      socket.on(event, (...args: unknown[]) => {
        const { names, ack } = parseArgs(args, count);
        if (!names) return ack({ ok: false, error: `${event} takes ${count} name(s)` });
        Promise.resolve(handle(names, ack)).catch(() => ack({ ok: false, error: 'Failed' }));
      });
    on('doctype_subscribe', 1, async ([doctype], ack) => {
      const user = await this.currentUser(socket);
      if (!user || !this.mayFollowDocType(user, doctype as string))
        return ack({ ok: false, error: 'Not permitted' });
      this.joined(socket, doctypeRoom(doctype as string), ack);
    });
    on('doctype_unsubscribe', 1, ([doctype], ack) => {
      this.rooms.leave(socket, doctypeRoom(doctype as string));
      ack({ ok: true });
    });
    on('doc_subscribe', 2, async ([doctype, name], ack) => {
      const user = await this.currentUser(socket);
      if (!user || !(await this.mayReadDoc(user, doctype as string, name as string)))
        return ack({ ok: false, error: 'Not permitted' });
      this.joined(socket, docRoom(doctype as string, name as string), ack);
    });
    on('doc_unsubscribe', 2, ([doctype, name], ack) => {
      this.rooms.leave(socket, docRoom(doctype as string, name as string));
      ack({ ok: true });
    });
    on('doc_open', 2, async ([doctype, name], ack) => {
      const user = await this.currentUser(socket);
      if (!user || !(await this.mayReadDoc(user, doctype as string, name as string)))
        return ack({ ok: false, error: 'Not permitted' });
      const room = openRoom(doctype as string, name as string);
      if (!this.rooms.join(socket, room)) return ack({ ok: false, error: 'Too many subscriptions' });
      socket.data.open.add(room);
      this.notifyViewers(socket, doctype as string, name as string);
      ack({ ok: true });
    });
    on('doc_close', 2, ([doctype, name], ack) => {
      const room = openRoom(doctype as string, name as string);
      // Closing what the socket never opened tells no one anything (no doc_viewers to the document's viewers).
      if (socket.data.open.delete(room)) {
        this.rooms.leave(socket, room);
        this.notifyViewers(socket, doctype as string, name as string);
      }
      ack({ ok: true });
    });
    const taskSubscribe = async ([id]: string[], ack: Ack) => {
      if (!(await this.tasks.mayFollow(socket, id as string)))
        return ack({ ok: false, error: 'Not permitted' });
      if (!this.rooms.join(socket, taskRoom(id as string)))
        return ack({ ok: false, error: 'Too many subscriptions' });
      this.tasks.follow(id as string);
      ack({ ok: true });
    };
    const taskUnsubscribe = ([id]: string[], ack: Ack) => {
      this.rooms.leave(socket, taskRoom(id as string));
      this.tasks.release(id as string);
      ack({ ok: true });
    };
    on('task_subscribe', 1, taskSubscribe);
    on('progress_subscribe', 1, taskSubscribe);
    on('task_unsubscribe', 1, taskUnsubscribe);
    socket.on('disconnect', () => {
      this.sockets.delete(socket);
      socket.data.release();
      const open = [...socket.data.open];
      const tasks = [...socket.data.rooms].filter((r) => r.startsWith('task_progress:'));
      this.rooms.leaveAll(socket);
      for (const room of open) {
        const [doctype, name] = splitOpenRoom(room);
        this.notifyViewers(socket, doctype, name);
      }
      for (const room of tasks) this.tasks.release(room.slice('task_progress:'.length));
    });
  }

  private joined(socket: RealtimeSocket, room: string, ack: Ack): void {
    if (!socket.connected) return;
    if (this.rooms.join(socket, room)) ack({ ok: true });
    else ack({ ok: false, error: 'Too many subscriptions' });
  }

  /** A DocType with lists (not a child), that the user may read some documents of. */
  private mayFollowDocType(user: SessionUser, doctype: string): boolean {
    const binding = this.site.registry.get(doctype);
    return binding !== undefined && !binding.meta.istable && hasDocTypePermission(user, binding.meta, 'read');
  }

  /** An existing document the user may read (a Single: the DocType's read right). */
  private async mayReadDoc(user: SessionUser, doctype: string, name: string): Promise<boolean> {
    const binding = this.site.registry.get(doctype);
    if (!binding || binding.meta.istable || !hasDocTypePermission(user, binding.meta, 'read')) return false;
    if (binding.meta.issingle) return true;
    const doc = await this.site.rows.read(binding, name);
    return doc !== undefined && hasDocumentPermission(this.site, user, binding, doc, 'read');
  }

  /**
   * Tells the sockets that have the document open who has it open (not a socket alone with itself, as Frappe). Like
   * every other event, only to users who may read the document now, and naming only them.
   */
  private notifyViewers(socket: RealtimeSocket, doctype: string, name: string): void {
    const sockets = [...this.rooms.members(openRoom(doctype, name))];
    const names = [...new Set(sockets.map((s) => s.data.user.name))];
    if (names.length === 0 || (names.length === 1 && names[0] === socket.data.user.name)) return;
    const checks = new EventReadChecks(this.site);
    void Promise.all(
      names.map(async (userName) => {
        const user = await checks.user(userName);
        return user !== undefined && (await this.mayReadDoc(user, doctype, name));
      }),
    )
      .then((may) => {
        const users = names.filter((_, i) => may[i]);
        if (users.length === 0 || (users.length === 1 && users[0] === socket.data.user.name)) return;
        const readers = sockets.filter((s) => s.connected && users.includes(s.data.user.name));
        emitTo(readers, 'doc_viewers', { doctype, docname: name, users });
      })
      .catch((err: unknown) =>
        logger().warn({ event: 'doc_viewers_failed', err: String(err) }, 'doc_viewers not sent'),
      );
  }
}

/** The room of the sockets that have a document open (Frappe's `open_doc:`). */
function openRoom(doctype: string, name: string): string {
  return `open_doc:${doctype}/${name}`;
}

function splitOpenRoom(room: string): [string, string] {
  const rest = room.slice('open_doc:'.length);
  const slash = rest.indexOf('/');
  return [rest.slice(0, slash), rest.slice(slash + 1)];
}
