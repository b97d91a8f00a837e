// Validates real answers against an OpenAPI document with ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses): finds the
// operation a request took by its path template and verb, then the answer's schema by status.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** One exchange a client had with the server. */
export interface Exchange {
  method: string;
  /** The request path as sent (percent-encoded). */
  path: string;
  status: number;
  body: unknown;
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** A validator over one OpenAPI document: `check` answers the mismatches of an exchange (empty: it matches). */
export function responseValidator(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  // Literal templates before templated ones, so `/bulk_update` wins over `/{name}`.
  const templates = Object.keys(doc.paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      re: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`,
      ),
    }))
    .sort((a, b) => a.params - b.params);

  return function check(x: Exchange): string[] {
    const found = templates.find((t) => t.re.test(x.path) && doc.paths[t.template]?.[x.method.toLowerCase()]);
    if (!found) return [`${x.method} ${x.path}: no operation in the document`];
    const op = doc.paths[found.template]?.[x.method.toLowerCase()];
    const statusKey = [String(x.status), `${String(x.status)[0]}XX`, 'default'].find((k) => op?.responses[k]);
    if (!statusKey) return [`${x.method} ${found.template}: status ${x.status} is not described`];
    let response = op?.responses[statusKey] as { $ref?: string; content?: Record<string, unknown> };
    let where = `#/${pointer('paths', found.template, x.method.toLowerCase(), 'responses', statusKey)}`;
    if (response.$ref) {
      where = response.$ref;
      const name = response.$ref.split('/').pop() as string;
      response = (doc as unknown as { components: { responses: Record<string, typeof response> } }).components
        .responses[name] as typeof response;
    }
    if (!response.content?.['application/json'])
      return x.body === undefined ? [] : [`${where}: no JSON body described`];
    const validate = ajv.getSchema(`openapi.json${where}/content/${pointer('application/json')}/schema`);
    if (!validate) return [`${where}: schema not found`];
    if (validate(x.body)) return [];
    return (validate.errors ?? []).map(
      (e) =>
        `${x.method} ${found.template} ${x.status}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  };
}
