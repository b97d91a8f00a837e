// The API docs page (rows `/api/docs` and `/api/docs/{name}`): Swagger UI (swagger-ui-dist) rendering the v2
// document, or v1 with `?v=1`, and the DocType diagram of generated/docs/schema.md rendered by Mermaid. Every asset
// is served from this origin (no CDN), compressed, with an ETag. Signed-in users only unless `openapi_public`; never framed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DoesNotExistError } from '../errors/errors';
import { compressedBody, sendCompressed, type CompressedBody } from '../http/compressed-body';
import type { AppContext } from '../http/state';
import { admitDocsPage } from './api-description-access';
import type { RouteParams } from '../http/route-row';

/** The script that starts Swagger UI on this origin and renders the diagram. */
const DOCS_SCRIPT = `// Starts Swagger UI on the document of this page's version; requests go to this origin.
(async function () {
  var version = new URLSearchParams(location.search).get('v') === '1' ? '' : 'v2/';
  var spec = await (await fetch('/api/' + version + 'openapi.json')).json();
  spec.servers = [{ url: location.origin, description: 'this server' }];
  window.ui = SwaggerUIBundle({
    spec: spec,
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'none',
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
  await mermaid.run({ querySelector: '.mermaid' });
  document.body.dataset.ready = 'yes';
})();
`;

/** The static assets of the page: file (a package's, resolved once) or text, and its content type. */
const ASSETS: Record<string, { type: string; load: () => Buffer }> = {
  'swagger-ui-bundle.js': {
    type: 'application/javascript; charset=utf-8',
    load: () => readFileSync(require.resolve('swagger-ui-dist/swagger-ui-bundle.js')),
  },
  'swagger-ui.css': {
    type: 'text/css; charset=utf-8',
    load: () => readFileSync(require.resolve('swagger-ui-dist/swagger-ui.css')),
  },
  'mermaid.min.js': {
    type: 'application/javascript; charset=utf-8',
    load: () => readFileSync(require.resolve('mermaid/dist/mermaid.min.js')),
  },
  'docs.js': { type: 'application/javascript; charset=utf-8', load: () => Buffer.from(DOCS_SCRIPT) },
};

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The Mermaid source between the fences of schema.md (empty when the file or the block is missing). */
function diagramSource(generatedDir: string): string {
  try {
    const text = readFileSync(path.resolve(generatedDir, 'docs/schema.md'), 'utf8');
    return /```mermaid\n([\s\S]*?)\n```/.exec(text)?.[1] ?? '';
  } catch {
    return '';
  }
}

function page(version: 1 | 2, diagram: string): string {
  const other = version === 2 ? '<a href="/api/docs?v=1">REST v1</a>' : '<a href="/api/docs">REST v2</a>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Doctype Service REST API v${version}</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<style>body{margin:0;font-family:sans-serif}nav{padding:12px 20px;border-bottom:1px solid #ddd}nav a{margin-right:16px}#schema{padding:0 20px 40px}</style>
</head>
<body>
<nav><strong>REST v${version}</strong> &middot; ${other} &middot; <a href="/api/${version === 2 ? 'v2/' : ''}openapi.json">openapi.json</a> &middot; <a href="#schema">DocTypes and their relations</a></nav>
<div id="swagger-ui"></div>
<section id="schema">
<h2>DocTypes and their relations</h2>
<pre class="mermaid">${escapeHtml(diagram)}</pre>
</section>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/mermaid.min.js"></script>
<script src="/api/docs/docs.js"></script>
</body>
</html>
`;
}

/** Clients keep what they loaded and ask again (304 while unchanged). */
const CACHE_CONTROL = 'no-cache';

/** The handlers of the docs page and its assets; each body is built on first request and kept. */
export function createDocsHandlers(generatedDir: string): {
  docs: (ctx: AppContext) => Promise<void>;
  docsAsset: (ctx: AppContext, params: RouteParams) => Promise<void>;
} {
  const bodies = new Map<string, CompressedBody>();
  const body = (key: string, make: () => Buffer) => {
    let found = bodies.get(key);
    if (!found) bodies.set(key, (found = compressedBody(make())));
    return found;
  };
  return {
    async docs(ctx) {
      if (!admitDocsPage(ctx)) return;
      const version = ctx.query.v === '1' ? 1 : 2;
      const html = body(`page:${version}`, () => Buffer.from(page(version, diagramSource(generatedDir))));
      await sendCompressed(ctx, html, 'text/html; charset=utf-8', CACHE_CONTROL);
    },
    async docsAsset(ctx, params) {
      ctx.set('X-Frame-Options', 'DENY');
      const asset = Object.hasOwn(ASSETS, params.name) ? ASSETS[params.name] : undefined;
      if (!asset) throw new DoesNotExistError(`No docs asset ${params.name.slice(0, 80)}`);
      await sendCompressed(ctx, body(params.name, asset.load), asset.type, CACHE_CONTROL);
    },
  };
}
