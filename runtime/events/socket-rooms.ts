// Frappe's rooms for sockets: `doc:<doctype>/<name>` gets `doc_update {doctype, name, modified}` for each save and the
// delete of the document, and `doctype:<doctype>` gets `list_update {doctype, name, user}` for each save and delete of the DocType
// (never for a Single or a child DocType). The rooms cover every namespace; while one of them has a socket, the
// realtime follows the event feed, and each event reaches only the sockets whose user may read the document at that
// moment. Every event is checked per user, not per socket: the sockets of a followed room are also grouped by user in
// socket.io rooms of their own (`<room>\0<user>`), so an event is one decision per user in the room and one broadcast
// by socket.io to the groups of the users allowed (the packet encoded once, no per-socket work of ours).
import type { Socket } from 'socket.io';
import type { SessionUser, Site } from '../site';
import { EventReadChecks } from './event-access';
import { EVENT_FEED } from './event-feed';
import type { EventRow } from './event-log';

/** What this service keeps on each socket (`socket.data`). */
export interface SocketState {
  user: SessionUser;
  /** The rooms of this index the socket is in. */
  rooms: Set<string>;
  /** Documents the socket has open (`doctype/name`), for doc_viewers. */
  open: Set<string>;
  /** Gives back the socket's place under `max_realtime_connections_per_user` (realtime-connections.ts). */
  release: () => void;
}

/** A socket of this service. */
export type RealtimeSocket = Socket<
  Record<string, (...args: unknown[]) => void>,
  Record<string, (...args: unknown[]) => void>,
  Record<string, never>,
  SocketState
>;

/** Most rooms one socket may be in (documents, DocTypes, tasks, open documents together). */
export const MAX_ROOMS_PER_SOCKET = 1000;

/** The room of one document. */
export const docRoom = (doctype: string, name: string): string => `doc:${doctype}/${name}`;
/** The room of a DocType's list. */
export const doctypeRoom = (doctype: string): string => `doctype:${doctype}`;
/** The socket.io room of one user's sockets in a followed room. */
const userRoom = (room: string, user: string): string => `${room}\u0000${user}`;

/** The sockets of each room, and the feed subscription while a document or DocType room has one. */
export class SocketRooms {
  private readonly rooms = new Map<string, Set<RealtimeSocket>>();
  /** The users of each followed room (`doc:`, `doctype:`), with how many sockets each has in it. */
  private readonly users = new Map<string, Map<string, number>>();
  /** How many sockets of each namespace are in followed rooms (a broadcast is per namespace). */
  private readonly namespaces = new Map<RealtimeSocket['nsp'], number>();
  /** How many sockets are in `doc:` and `doctype:` rooms (one per membership). */
  private followers = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly site: Site) {}

  /** The sockets in `room` (none: an empty set). */
  members(room: string): ReadonlySet<RealtimeSocket> {
    return this.rooms.get(room) ?? new Set();
  }

  /** Puts `socket` in `room`; false when the socket is in too many rooms already. */
  join(socket: RealtimeSocket, room: string): boolean {
    const state = socket.data;
    if (state.rooms.has(room)) return true;
    if (state.rooms.size >= MAX_ROOMS_PER_SOCKET) return false;
    state.rooms.add(room);
    let members = this.rooms.get(room);
    if (!members) this.rooms.set(room, (members = new Set()));
    members.add(socket);
    if (!followed(room)) return true;
    let users = this.users.get(room);
    if (!users) this.users.set(room, (users = new Map()));
    users.set(state.user.name, (users.get(state.user.name) ?? 0) + 1);
    this.namespaces.set(socket.nsp, (this.namespaces.get(socket.nsp) ?? 0) + 1);
    void socket.join(userRoom(room, state.user.name));
    if (this.followers++ === 0)
      EVENT_FEED.of(this.site)
        .listen(this.onEvents)
        .catch(() => undefined);
    return true;
  }

  /** Takes `socket` out of `room`. */
  leave(socket: RealtimeSocket, room: string): void {
    const state = socket.data;
    if (!state.rooms.delete(room)) return;
    const members = this.rooms.get(room);
    members?.delete(socket);
    if (members && members.size === 0) this.rooms.delete(room);
    if (!followed(room)) return;
    const users = this.users.get(room);
    const left = (users?.get(state.user.name) ?? 1) - 1;
    if (left > 0) users?.set(state.user.name, left);
    else users?.delete(state.user.name);
    if (users?.size === 0) this.users.delete(room);
    const inNamespace = (this.namespaces.get(socket.nsp) ?? 1) - 1;
    if (inNamespace > 0) this.namespaces.set(socket.nsp, inNamespace);
    else this.namespaces.delete(socket.nsp);
    // A socket that disconnected has left its socket.io rooms already.
    if (socket.connected) void socket.leave(userRoom(room, state.user.name));
    if (--this.followers === 0) EVENT_FEED.of(this.site).unlisten(this.onEvents);
  }

  /** Takes `socket` out of every room (it disconnected). */
  leaveAll(socket: RealtimeSocket): void {
    for (const room of [...socket.data.rooms]) this.leave(socket, room);
  }

  /** Stops following the feed (the server closes). */
  close(): void {
    if (this.followers > 0) EVENT_FEED.of(this.site).unlisten(this.onEvents);
    this.followers = 0;
    this.rooms.clear();
    this.users.clear();
    this.namespaces.clear();
  }

  private readonly onEvents = (events: readonly EventRow[]): void => {
    this.chain = this.chain.then(() => this.deliver(events)).catch(() => undefined);
  };

  /** Decides each user's right to each event of the batch, then broadcasts them in id order. */
  private async deliver(events: readonly EventRow[]): Promise<void> {
    const checks = new EventReadChecks(this.site);
    const plans = events.map((event) => {
      const binding = this.site.registry.get(event.doctype);
      const listed = binding !== undefined && !binding.meta.issingle && !binding.meta.istable;
      // A delete too, as Frappe's delete_doc calls notify_update: a form following the document learns it is gone.
      const doc = docRoom(event.doctype, event.docname);
      const list = listed ? doctypeRoom(event.doctype) : undefined;
      return { event, doc: this.allowed(checks, event, doc), list: this.allowed(checks, event, list) };
    });
    for (const { event, doc, list } of plans) {
      const update = { doctype: event.doctype, name: event.docname, modified: event.modified };
      this.broadcast(await doc, 'doc_update', update);
      this.broadcast(await list, 'list_update', {
        doctype: event.doctype,
        name: event.docname,
        user: event.user,
      });
    }
  }

  /** The socket.io rooms of the users in `room` who may read the document of `event` now. */
  private async allowed(
    checks: EventReadChecks,
    event: EventRow,
    room: string | undefined,
  ): Promise<string[]> {
    const users = room === undefined ? undefined : this.users.get(room);
    if (!users) return [];
    const names = [...users.keys()];
    const may = await Promise.all(names.map((user) => checks.canRead(user, event)));
    return names.filter((_, i) => may[i]).map((user) => userRoom(room as string, user));
  }

  /** Emits to the sockets of these socket.io rooms, in every namespace that has followers. */
  private broadcast(rooms: string[], event: string, payload: unknown): void {
    if (rooms.length === 0) return;
    for (const nsp of this.namespaces.keys()) nsp.local.to(rooms).emit(event, payload);
  }
}

/** True for the rooms that need the event feed. */
function followed(room: string): boolean {
  return room.startsWith('doc:') || room.startsWith('doctype:');
}

/** Emits one event to many sockets, encoded once per namespace (socket.io broadcasts to the sockets' own rooms). */
export function emitTo(sockets: readonly RealtimeSocket[], event: string, payload: unknown): void {
  if (sockets.length === 0) return;
  if (sockets.length === 1) {
    (sockets[0] as RealtimeSocket).emit(event, payload);
    return;
  }
  const byNamespace = new Map<RealtimeSocket['nsp'], string[]>();
  for (const socket of sockets) {
    const ids = byNamespace.get(socket.nsp);
    if (ids) ids.push(socket.id);
    else byNamespace.set(socket.nsp, [socket.id]);
  }
  for (const [nsp, ids] of byNamespace) nsp.local.to(ids).emit(event, payload);
}
