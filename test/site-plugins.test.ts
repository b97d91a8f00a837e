// The site's plugin registry: state made once on first use and kept per site, teardown in reverse order of
// installation, a throwing teardown not stopping the others, and closeSite closing the database last.
import type { Site } from '../runtime/site';
import { SitePlugin, SitePlugins } from '../runtime/site';
import { createTestSite } from './helpers/test-site';

/** A site with nothing but its plugin registry (what these tests exercise). */
const bareSite = () => ({ plugins: new SitePlugins() }) as unknown as Site;

test('state is made on first use, once per site, and kept apart per site', () => {
  let made = 0;
  const plugin = new SitePlugin('counter', () => ({ n: ++made }));
  const a = bareSite();
  const b = bareSite();
  expect(plugin.peek(a)).toBeUndefined();
  expect(plugin.of(a)).toBe(plugin.of(a));
  expect(plugin.of(a).n).toBe(1);
  expect(plugin.of(b).n).toBe(2);
  expect(made).toBe(2);
  expect(plugin.peek(a)).toBe(plugin.of(a));
});

test('teardowns run in reverse order of installation, each with its own state; unmade states are not closed', async () => {
  const site = bareSite();
  const closed: string[] = [];
  const plugin = (name: string) =>
    new SitePlugin(
      name,
      () => ({ name }),
      (state, s) => {
        expect(s).toBe(site);
        closed.push(state.name);
      },
    );
  const first = plugin('first');
  const second = plugin('second');
  const unused = plugin('unused');
  site.plugins.onClose('database', () => void closed.push('database'));
  site.plugins.install(first, unused, second);
  // Made in another order than installed: the installation decides.
  second.of(site);
  first.of(site);
  site.plugins.onClose('jobs', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    closed.push('jobs');
  });
  await site.plugins.close(site);
  expect(closed).toEqual(['jobs', 'second', 'first', 'database']);
  expect(first.peek(site)).toBeUndefined();
});

test('a plugin used before it was installed is installed then (and closes before those installed earlier)', async () => {
  const site = bareSite();
  const closed: string[] = [];
  const early = new SitePlugin(
    'early',
    () => ({}),
    () => void closed.push('early'),
  );
  const late = new SitePlugin(
    'late',
    () => ({}),
    () => void closed.push('late'),
  );
  site.plugins.install(early);
  late.of(site);
  early.of(site);
  site.plugins.install(late); // already installed: no second teardown
  await site.plugins.close(site);
  expect(closed).toEqual(['late', 'early']);
});

test('a throwing teardown does not stop the others; its error is thrown once all have run', async () => {
  const site = bareSite();
  const closed: string[] = [];
  site.plugins.onClose('a', () => void closed.push('a'));
  const broken = new SitePlugin(
    'broken',
    () => ({}),
    () => {
      throw new Error('broken close');
    },
  );
  site.plugins.install(broken);
  broken.of(site);
  site.plugins.onClose('b', () => Promise.reject(new Error('second failure')));
  site.plugins.onClose('c', () => void closed.push('c'));
  await expect(site.plugins.close(site)).rejects.toThrow('second failure');
  expect(closed).toEqual(['c', 'a']);
});

test('set replaces a state; forget drops it without closing it', async () => {
  const site = bareSite();
  const closed: string[] = [];
  const plugin = new SitePlugin(
    'store',
    () => ({ kind: 'made' }),
    (s) => void closed.push(s.kind),
  );
  plugin.set(site, { kind: 'given' });
  expect(plugin.of(site).kind).toBe('given');
  site.plugins.forget(plugin);
  expect(plugin.of(site).kind).toBe('made');
  await site.plugins.close(site);
  expect(closed).toEqual(['made']);
});

test('closeSite: a teardown added after the site opened runs first, while the database still answers', async () => {
  const t = await createTestSite();
  let users: unknown;
  t.site.plugins.onClose('probe', async () => {
    users = (await t.site.db.knex('tabUser').count({ n: '*' }))[0]?.n;
  });
  await t.close();
  expect(Number(users)).toBeGreaterThanOrEqual(2);
  await expect(t.site.db.knex('tabUser').count({ n: '*' })).rejects.toThrow();
});
