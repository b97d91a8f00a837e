// The responses in flight, for the shutdown: an array with each response's index stored on it, not a Set.
//
// A Set that gains and loses an entry per request rehashes its table every few dozen requests, and V8 allocates the
// new table in the old generation once the current one is there (a full collection that catches it in flight puts it
// there); each table it leaves behind still holds the responses it held when it was replaced. Those dead old tables
// keep their responses alive past every scavenge until the next full collection, so each request's objects (the
// response, the request, its header strings and body, Koa's context) reached the old generation: 3.5 KB per GET one
// and per create under a 50-connection load, from the first full collection of a run on (after a create load, or at
// once under tsx), at 2 x 4 MB (npm start) and at 2 x 8 MB alike. With this list they die young: GET one after a create
// load went from 58-66 to 43-46 us of server CPU, and creates from 116-136 to 101-123 (README, Memory).
import type { ServerResponse } from 'node:http';

/** Where a tracked response keeps its index in the list. */
const SLOT = Symbol('in-flight slot');
type Tracked = ServerResponse & { [SLOT]: number };

/** The responses of a server that have not closed yet. */
export class InFlightResponses {
  private readonly list: Tracked[] = [];
  /** One 'close' listener for every response (`this` is the response), instead of a closure per request. */
  private readonly onClose: (this: Tracked) => void;

  constructor() {
    const list = this.list;
    this.onClose = function onClose(this: Tracked): void {
      const index = this[SLOT];
      if (list[index] !== this) return;
      // The last one takes the closed one's place: no hole, nothing left behind that still points at a response.
      const last = list.pop() as Tracked;
      if (last !== this) {
        list[index] = last;
        last[SLOT] = index;
      }
    };
  }

  /** Tracks `res` until it closes. */
  add(res: ServerResponse): void {
    const tracked = res as Tracked;
    tracked[SLOT] = this.list.length;
    this.list.push(tracked);
    res.on('close', this.onClose);
  }

  /** How many are in flight. */
  get size(): number {
    return this.list.length;
  }

  /** The responses in flight now (a copy). */
  snapshot(): ServerResponse[] {
    return this.list.slice();
  }
}
