// Site config read_replicas where it cannot be served: on SQLite the site refuses to start with a configuration error
// that names the key (a SQLite file has no replicas), and a value that is not a list of URLs is refused when the site
// config is read.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSite } from '../../runtime/bootstrap';
import { DEFAULT_SITE_CONFIG, loadSiteConfig } from '../../runtime/config/config';
import { ValidationError } from '../../runtime/errors/errors';
import { registry } from '../../generated';

const dir = path.resolve(__dirname, '../tmp', `replicas-config-${process.pid}`);

beforeAll(() => mkdirSync(dir, { recursive: true }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a SQLite site with read_replicas does not start, and says why', async () => {
  const file = path.join(dir, 'site.sqlite');
  const opening = openSite(
    {
      port: 0,
      host: '127.0.0.1',
      databaseUrl: `sqlite:${file}`,
      adminPassword: 'replica-admin-1',
      adminPasswordDefaulted: false,
      site: { ...DEFAULT_SITE_CONFIG, read_replicas: [`sqlite:${file}-copy`] },
    },
    registry,
  );
  await expect(opening).rejects.toThrow(ValidationError);
  await expect(opening).rejects.toThrow(/site config read_replicas: the sqlite backend has no replicas/);
});

test.each([
  ['a string', '"mysql://root@127.0.0.1/site"', /read_replicas must be a list of database URLs/],
  ['a list holding a number', '[1]', /read_replicas must be a list of database URLs/],
])('read_replicas as %s is refused when the site config is read', (_what, value, message) => {
  const file = path.join(dir, 'site_config.json');
  writeFileSync(file, `{ "read_replicas": ${value} }`);
  expect(() => loadSiteConfig(file, true)).toThrow(message);
});

test('read_replica_timeout must be a whole number of ms', () => {
  const file = path.join(dir, 'site_config.json');
  writeFileSync(file, '{ "read_replica_timeout": 0 }');
  expect(() => loadSiteConfig(file, true)).toThrow(/read_replica_timeout must be a whole number of ms/);
});
