// A per-process cache that every process drops when one of them writes what it holds: with REDIS_URL the writer
// publishes a notice and every subscribed process forgets at once (and again when its subscription is live after an
// outage, a notice may have been missed); without it, other processes rely on the cache's own expiry.
import { SitePlugin, type Site } from '../site';
import { RedisSubscription } from './redis-subscription';
import { publishNotice, siteRedis } from './site-redis';

/** One such cache's notices: its site plugin (the subscription, closed with the site), listen and changed. */
export class ChangeBroadcast {
  /** Installed with the site's features; holds the subscription. */
  readonly plugin: SitePlugin<{ sub?: RedisSubscription }>;

  /**
   * `name`: the plugin's name; `channel`: the notice's channel after the site's prefix; `forgetHere`: drops this
   * process's cache (of the site, when it is kept per site).
   */
  constructor(
    name: string,
    private readonly channel: string,
    private readonly forgetHere: (site: Site) => void,
  ) {
    this.plugin = new SitePlugin<{ sub?: RedisSubscription }>(
      name,
      () => ({}),
      (state) => state.sub?.close(),
    );
  }

  /** Listens for other processes' notices (once per site; a no-op without REDIS_URL); calling it again does nothing. */
  listen(site: Site): void {
    const state = this.plugin.of(site);
    if (state.sub) return;
    const shared = siteRedis(site);
    if (!shared) return;
    const forget = () => this.forgetHere(site);
    state.sub = new RedisSubscription(shared.redis, `${shared.prefix}${this.channel}`, {
      message: forget,
      live: forget,
    });
  }

  /**
   * Tells every process the cache's source changed (called after the commit that changed it): this one forgets at
   * once, the others when the notice arrives. Redis being down costs only the notice (sent through the breaker: no
   * save waits on a Redis known to be down).
   */
  async changed(site: Site): Promise<void> {
    this.forgetHere(site);
    const shared = siteRedis(site);
    if (shared) await publishNotice(shared, `${shared.prefix}${this.channel}`, 'changed');
  }
}

/** The subscription of `broadcast` on `site`, when it listens (tests wait for it to be live). */
export const subscriptionOf = (broadcast: ChangeBroadcast, site: Site): RedisSubscription | undefined =>
  broadcast.plugin.peek(site)?.sub;
