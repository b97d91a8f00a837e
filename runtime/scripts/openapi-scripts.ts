// API Server Scripts in the served OpenAPI documents: the generated documents are built before any script exists, so
// the enabled API scripts are added as method paths when a document is served (and again after a script changes).
import type { Site } from '../site';
import { scriptIndex, type ScriptIndex } from './script-store';

const cache = new WeakMap<ScriptIndex, Map<string, string>>();

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operation(
  version: 1 | 2,
  method: string,
  verb: string,
  scriptName: string,
  allowGuest: boolean,
): object {
  const key = version === 2 ? 'data' : 'message';
  return {
    tags: ['server scripts'],
    operationId: `v${version}_script_${method.replace(/[^A-Za-z0-9_]/g, '_')}_${verb}`,
    summary: `Server Script ${scriptName} (API)`,
    ...(allowGuest ? { security: [{}] } : {}),
    ...(verb === 'post'
      ? {
          requestBody: {
            required: false,
            content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
          },
        }
      : { parameters: [] }),
    responses: {
      200: {
        description: 'frappe.response.message of the script',
        content: { 'application/json': { schema: { type: 'object', properties: { [key]: {} } } } },
      },
      400: errorResponse('frappe.throw, or invalid input'),
      401: errorResponse('Authentication required'),
      403: errorResponse('Not permitted (Guest without allow_guest, a refused host call, scripts disabled)'),
      429: errorResponse('The script rate limit is spent (see Retry-After)'),
      500: errorResponse('ServerScriptError: the script failed or hit a limit'),
    },
  };
}

/** The OpenAPI document `text` of API `version` with the site's enabled API scripts added as methods. */
export async function withApiScripts(site: Site, version: 1 | 2, text: string): Promise<string> {
  if (site.config.site.server_script_enabled === false) return text;
  const index = await scriptIndex(site);
  if (index.api.size === 0) return text;
  let byVersion = cache.get(index);
  if (!byVersion) cache.set(index, (byVersion = new Map()));
  const known = byVersion.get(`${version}:${text.length}`);
  if (known) return known;
  const doc = JSON.parse(text) as { paths: Record<string, unknown> };
  for (const [method, script] of index.api) {
    const path = version === 2 ? `/api/v2/method/${method}` : `/api/method/${method}`;
    doc.paths[path] = {
      get: operation(version, method, 'get', script.name, script.allowGuest),
      post: operation(version, method, 'post', script.name, script.allowGuest),
    };
  }
  const out = JSON.stringify(doc);
  byVersion.set(`${version}:${text.length}`, out);
  return out;
}
