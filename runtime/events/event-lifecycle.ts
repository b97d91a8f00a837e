// What the event log adds to the document lifecycle: an event row written with every save and delete, inside the
// document's transaction (afterWrite / afterDelete), then, after the commit, the feed woken and other processes told;
// and, at most once a minute per process, the events older than the retention pruned after a commit.
import { lifecycleOf } from '../document/extension-points';
import type { DocumentTransaction } from '../document/lifecycle';
import { logger } from '../log/logger';
import { SitePlugin, type Site } from '../site';
import { EVENT_FEED } from './event-feed';
import { deleteEvent, pruneEvents, saveEvent, writeEvent } from './event-log';

/** How often a process prunes the log (after a commit that wrote events). */
const PRUNE_EVERY_MS = 60_000;

/** When this process prunes next (ms since epoch): the first write of a process prunes. */
const PRUNING = new SitePlugin('event pruning', () => ({ next: 0 }));

/** After the commit of `tx`, once a minute at most: drops the events past the retention. */
function pruneWhenDue(site: Site, tx: DocumentTransaction): void {
  const pruning = PRUNING.of(site);
  const now = Date.now();
  if (now < pruning.next) return;
  pruning.next = now + PRUNE_EVERY_MS;
  tx.afterCommit(async () => {
    try {
      await pruneEvents(site, now);
    } catch (err) {
      logger().warn({ event: 'event_prune_failed', err: String(err) }, 'pruning the event log failed');
    }
  });
}

/** After the commit: the feed reads the new events (when something listens) and other processes are told. */
function announce(site: Site, tx: DocumentTransaction): void {
  const feed = EVENT_FEED.of(site);
  if (feed.wantsCommits) tx.afterCommit(feed.committed);
  pruneWhenDue(site, tx);
}

/** Registers the event log's handlers for every DocType of the site. */
export function registerEvents(site: Site): void {
  const extensions = lifecycleOf(site);
  extensions.on('afterWrite', (op) => {
    const written = writeEvent(site, op.trx, saveEvent(op));
    announce(site, op.tx);
    return written;
  });
  extensions.on('afterDelete', (op) => {
    const written = writeEvent(site, op.trx, deleteEvent(op));
    announce(site, op.tx);
    return written;
  });
}
