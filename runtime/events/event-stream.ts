// Server-sent events of one DocType (or one document): `GET /api/v2/events`. A stream that resumes (Last-Event-ID)
// first replays the log from that id up to where the live feed stands, then follows the feed; events are sent in id
// order and an id at or below the last one sent is dropped, so nothing is missed and nothing comes twice. An id older
// than the log's retention (or unknown to it) gets `event: reset`: the client reloads what it shows.
import type { ServerResponse } from 'node:http';
import { DoesNotExistError, ValidationError } from '../errors/errors';
import { onShutdown } from '../lifecycle/shutdown-hooks';
import { assertDocumentPermission } from '../permissions/document-permission';
import { assertDocTypePermission, refusal } from '../permissions/doctype-permission';
import type { SessionUser, Site } from '../site';
import { EventReadChecks } from './event-access';
import { EVENT_FEED } from './event-feed';
import { eventsBetween, logBounds, type EventRow } from './event-log';
import { holdConnection } from './realtime-connections';

/** What a client asks to follow. */
export interface StreamRequest {
  doctype: string;
  /** One document; the whole DocType when absent. */
  name?: string;
  /** Resume after this event (Last-Event-ID). */
  lastEventId?: number;
}

/** How often a comment line keeps an idle stream open (proxies close silent connections). */
export const KEEP_ALIVE_MS = 15_000;
/** Bytes a slow client may leave unread before its stream is ended (it resumes with Last-Event-ID). */
const MAX_UNREAD_BYTES = 1 << 20;
/**
 * Events a replay reads, checks and writes at a time; the next page waits until the client has read the last one down
 * to half of MAX_UNREAD_BYTES, so a resume from far back holds one page in memory, not the whole range.
 */
const REPLAY_PAGE = 500;

/** What a stream answers to besides its events (realtime-connections.ts). */
export interface StreamGuard {
  /** Checks the request's credentials again: false when they no longer sign this user in. */
  stillSignedIn: () => Promise<boolean>;
  /** The key the stream counts under towards `max_realtime_connections_per_user`. */
  connection: string;
}

/** Open streams, ended when the process shuts down (their clients resume elsewhere or later). */
const open = new Set<EventStream>();
let shutdownHooked = false;

/**
 * The `event:` name of an event on a stream of a document (`doc_*`) or of a DocType (`list_update`, `doc_delete`). A
 * Single's stream is a document's: it has no list (CONTRACT 9: no `list_update` for a Single).
 */
function eventName(event: EventRow, ofDocument: boolean): string {
  if (event.action === 'delete') return 'doc_delete';
  return ofDocument ? 'doc_update' : 'list_update';
}

/** One SSE message. */
function message(event: EventRow, ofDocument: boolean): string {
  const data = JSON.stringify({
    doctype: event.doctype,
    name: event.docname,
    modified: event.modified,
    user: event.user,
  });
  return `id: ${event.id}\nevent: ${eventName(event, ofDocument)}\ndata: ${data}\n\n`;
}

/** Throws unless `user` may follow the request: an existing, non-child DocType it may read (and document). */
async function authorize(site: Site, user: SessionUser, request: StreamRequest): Promise<void> {
  const binding = site.registry.get(request.doctype);
  // A Guest is refused before anything else (401), so it learns no DocType names, nor which are child tables.
  if (!binding || (binding.meta.istable && user.name === 'Guest'))
    throw user.name === 'Guest'
      ? refusal(user, '')
      : new DoesNotExistError(`DocType ${request.doctype.slice(0, 140)} not found`);
  if (binding.meta.istable)
    throw new ValidationError(
      `${binding.meta.name} is a child DocType: its rows change with their parent, follow the parent`,
    );
  assertDocTypePermission(user, binding.meta, 'read');
  if (request.name === undefined) return;
  if (binding.meta.issingle) {
    if (request.name !== binding.meta.name)
      throw new DoesNotExistError(`${binding.meta.name} ${request.name.slice(0, 140)} not found`);
    return;
  }
  const doc = await site.rows.read(binding, request.name);
  if (!doc) throw new DoesNotExistError(`${binding.meta.name} ${request.name.slice(0, 140)} not found`);
  await assertDocumentPermission({ site, user, version: 2 }, binding, doc, 'read');
}

/**
 * Checks the request, then answers `res` with the stream until the client goes (or the process shuts down). Refusals
 * (unknown DocType 404, no read permission 401/403) are thrown before anything is written.
 */
export async function openEventStream(
  site: Site,
  user: SessionUser,
  request: StreamRequest,
  res: ServerResponse,
  guard: StreamGuard,
): Promise<void> {
  await authorize(site, user, request);
  const release = holdConnection(site, guard.connection);
  const stream = new EventStream(site, user, request, res, guard.stillSignedIn, release);
  await stream.start();
}

/** One client's stream. */
class EventStream {
  /** The id of the last event sent (or passed over as unreadable): later ones only. */
  private sent = 0;
  /** Events from the feed that arrived while the replay ran. */
  private early: EventRow[] | undefined = [];
  /** Deliveries in order: each batch's permission checks finish before the next batch is written. */
  private chain: Promise<void> = Promise.resolve();
  private keepAlive: NodeJS.Timeout | undefined;
  private recheck: NodeJS.Timeout | undefined;
  private ended = false;
  private readonly ofDocument: boolean;
  private readonly feed;

  constructor(
    private readonly site: Site,
    private readonly user: SessionUser,
    private readonly request: StreamRequest,
    private readonly res: ServerResponse,
    private readonly stillSignedIn: () => Promise<boolean>,
    private readonly release: () => void,
  ) {
    this.ofDocument =
      request.name !== undefined || site.registry.get(request.doctype)?.meta.issingle === true;
    this.feed = EVENT_FEED.of(site);
  }

  async start(): Promise<void> {
    const { res } = this;
    res.on('close', this.end);
    const head = await this.feed.listen(this.onEvents);
    if (this.ended) return;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(': stream open\n\n');
    open.add(this);
    if (!shutdownHooked) {
      shutdownHooked = true;
      onShutdown('event streams', () => {
        for (const stream of [...open]) stream.end();
      });
    }
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
    this.recheck = setInterval(() => {
      this.stillSignedIn().then((yes) => yes || this.end(), this.end);
    }, this.site.config.site.realtime_recheck_ms);
    this.recheck.unref();
    const last = this.request.lastEventId;
    if (last === undefined) this.sent = head;
    else await this.resume(last, head);
    const early = this.early ?? [];
    this.early = undefined;
    if (early.length) this.onEvents(early);
  }

  /** Replays (last, head] from the log, or sends `reset` when `last` is older than the log (or unknown to it). */
  private async resume(last: number, head: number): Promise<void> {
    const { oldest, newest } = await logBounds(this.site);
    // Id 0 (nothing seen yet) is known while the log still starts at the first event; after a purge it is a reset too.
    const known = oldest > 0 ? last >= oldest - 1 && last <= Math.max(newest, head) : last <= head;
    if (!known) {
      this.sent = head;
      this.write(`id: ${head}\nevent: reset\ndata: {}\n\n`);
      return;
    }
    const { doctype, name } = this.request;
    this.sent = last;
    for (let from = last; from < head && !this.ended;) {
      const page = await eventsBetween(this.site, from, head, REPLAY_PAGE, doctype, name);
      await this.deliver(page);
      if (page.length < REPLAY_PAGE) break;
      from = (page[page.length - 1] as EventRow).id;
      await this.drained();
    }
    this.sent = Math.max(this.sent, head);
  }

  /** Resolves once the client has read what was written down to half of MAX_UNREAD_BYTES, or the stream ended. */
  private drained(): Promise<void> {
    if (this.ended || this.res.writableLength <= MAX_UNREAD_BYTES / 2) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  /** The feed's listener: keeps this stream's events, in order. */
  private readonly onEvents = (events: readonly EventRow[]): void => {
    const { doctype, name } = this.request;
    const mine = events.filter((e) => e.doctype === doctype && (name === undefined || e.docname === name));
    if (this.early) {
      this.early.push(...mine);
      return;
    }
    if (mine.length === 0) return;
    this.chain = this.chain.then(() => this.deliver(mine)).catch(() => this.end());
  };

  /** Writes the events after the last one sent that the user may read now. */
  private async deliver(events: readonly EventRow[]): Promise<void> {
    const fresh = events.filter((e) => e.id > this.sent);
    if (fresh.length === 0 || this.ended) return;
    const checks = new EventReadChecks(this.site);
    const readable = await Promise.all(fresh.map((e) => checks.canRead(this.user.name, e)));
    let text = '';
    fresh.forEach((event, i) => {
      if (event.id <= this.sent) return;
      this.sent = event.id;
      if (readable[i]) text += message(event, this.ofDocument);
    });
    if (text) this.write(text);
  }

  private write(text: string): void {
    if (this.ended) return;
    this.res.write(text);
    if (this.res.writableLength > MAX_UNREAD_BYTES) this.end();
  }

  /** Ends the stream and stops following the feed (the client closed, lagged too far, or the process stops). */
  readonly end = (): void => {
    if (this.ended) return;
    this.ended = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (this.recheck) clearInterval(this.recheck);
    this.release();
    this.feed.unlisten(this.onEvents);
    open.delete(this);
    if (!this.res.writableEnded) this.res.end();
  };
}
