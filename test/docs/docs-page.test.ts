// The API docs page: /api/docs serves Swagger UI and the DocType diagram from this origin (assets compressed, with
// ETags); in headless Chromium (Debian's chromium, driven by playwright-core) the page renders, finds ToDo's create
// operation and performs the call. The browser part skips, saying so, when /usr/bin/chromium is absent.
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createTestSite, type TestSite } from '../helpers/test-site';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let t: TestSite;
beforeAll(async () => {
  // The page and its documents for Guests: site config openapi_public (the default is tested in api-description-access).
  t = await createTestSite({ site: { openapi_public: true } });
});
afterAll(() => t.close());

describe('the docs routes', () => {
  test('/api/docs is an HTML page with the v1 link, the diagram of generated/docs/schema.md and local assets', async () => {
    const res = await t.http.get('/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('href="/api/docs?v=1"');
    const schema = readFileSync(path.resolve(__dirname, '../../generated/docs/schema.md'), 'utf8');
    expect(schema).toContain('```mermaid\nerDiagram\n');
    expect(res.text).toContain('<pre class="mermaid">erDiagram');
    expect(res.text).toContain('ToDo }o--o| User : &quot;allocated_to&quot;');
    const scripts = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(scripts.every((u) => u.startsWith('/') || u.startsWith('#'))).toBe(true);
    const v1 = await t.http.get('/api/docs?v=1');
    expect(v1.text).toContain('<title>Doctype Service REST API v1</title>');
  });

  test.each([
    ['swagger-ui-bundle.js', /javascript/],
    ['swagger-ui.css', /text\/css/],
    ['mermaid.min.js', /javascript/],
    ['docs.js', /javascript/],
  ])(
    '/api/docs/%s is served with its type, compressed when accepted, 304 on its ETag',
    async (name, type) => {
      const res = await t.http.get(`/api/docs/${name}`).set('Accept-Encoding', 'gzip');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.headers['content-encoding']).toBe('gzip');
      const again = await t.http
        .get(`/api/docs/${name}`)
        .set('Accept-Encoding', 'gzip')
        .set('If-None-Match', String(res.headers.etag));
      expect(again.status).toBe(304);
    },
  );

  test.each(['nope.js', '..%2Fpackage.json', 'constructor', '__proto__'])(
    '/api/docs/%s is 404',
    async (name) => {
      const res = await t.http.get(`/api/docs/${name}`);
      expect(res.status).toBe(404);
      expect(res.body.exc_type).toBe('DoesNotExistError');
    },
  );
});

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.log(`skipping the docs-page browser test: ${CHROMIUM} is absent (apt-get install -y chromium)`);

(haveChromium ? describe : describe.skip)('the docs page in headless Chromium', () => {
  let browser: Browser;
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer(t.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  test('renders, finds ToDo create and performs the call; nothing is loaded from another origin', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // The credential Swagger UI's call carries (as a client of this API would send it).
    await page.setExtraHTTPHeaders({ Authorization: t.adminToken });
    await page.goto(`${base}/api/docs`);
    await page.waitForSelector('body[data-ready="yes"]', { timeout: 60_000 });
    // The diagram is drawn: an SVG naming the DocTypes.
    expect(await page.locator('#schema svg').count()).toBe(1);
    expect(await page.locator('#schema svg').textContent()).toContain('ToDo');

    // Every DocType is a tag, collapsed: open ToDo's, then its create operation.
    expect(await page.locator('.opblock-tag').count()).toBeGreaterThan(10);
    await page.locator('#operations-tag-ToDo').click();
    const op = page.locator('#operations-ToDo-v2_create_todo');
    await op.waitFor({ timeout: 30_000 });
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    const body = op.locator('textarea.body-param__text');
    await body.fill(JSON.stringify({ description: 'made in the docs page', priority: 'High' }));
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.textContent())?.trim()).toBe('201');

    const made = await t.http
      .get('/api/v2/document/ToDo')
      .query({
        fields: JSON.stringify(['name', 'description']),
        filters: JSON.stringify({ description: 'made in the docs page' }),
      })
      .set('Authorization', t.adminToken);
    expect(made.body.data).toHaveLength(1);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
