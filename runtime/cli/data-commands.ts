// `svc import FILE --doctype D [--update]` and `svc export --doctype D [--format F] [--fields …] [--filters …]
// [--order-by …] [--out FILE]`: the Data Import and export paths run as Administrator in this process (no job, no
// Data Import record), with a progress bar on stderr.
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { closeSite, openSite } from '../bootstrap';
import { loadConfig } from '../config/config';
import { logToStderr } from '../log/logger';
import { exportSource } from '../data-export/export-pages';
import { exportFormat, exportStream } from '../data-export/export-stream';
import { checkImportFile, streamImport } from '../data-import/stream-import';
import { tableKindOf } from '../data-import/read-table';
import { runImport } from '../data-import/run-import';
import type { Caller } from '../document/caller';
import { AppError } from '../errors/errors';
import { countDocuments } from '../operations/list-operations';
import { ADMINISTRATOR, type Site } from '../site';
import { loadRegistry } from './load-registry';

const admin = { name: ADMINISTRATOR, roles: new Set(['Administrator', 'System Manager', 'All']) };

/** Draws `[####      ]  40% 400/1000 label` on stderr, at most every 100 ms (and always at the end). */
function progressBar(label: string): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 100) return;
    last = now;
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(share * 30);
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${' '.repeat(30 - filled)}] ${String(Math.round(share * 100)).padStart(3)}% ${done}/${total} ${label}`,
    );
    if (done >= total) process.stderr.write('\n');
  };
}

async function withSite(work: (site: Site) => Promise<number>): Promise<number> {
  const config = loadConfig();
  config.site.job_worker = false;
  const site = await openSite(config, await loadRegistry());
  try {
    return await work(site);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    console.error(`${err.excType}: ${err.message}`);
    return 1;
  } finally {
    await closeSite(site);
  }
}

/** `svc import FILE --doctype D [--update]`: exit 0 when every document was imported, 1 otherwise. */
export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { doctype: { type: 'string' }, update: { type: 'boolean' } },
  });
  const file = positionals[0];
  const doctype = values.doctype;
  if (!file || !doctype) {
    console.error('svc import: FILE and --doctype are required');
    return 1;
  }
  return withSite(async (site) => {
    const binding = site.registry.get(doctype);
    if (!binding) {
      console.error(`svc import: DocType ${doctype} not found`);
      return 1;
    }
    const kind = tableKindOf(file);
    const open = () => (kind === 'csv' ? createReadStream(file) : readFileSync(file));
    // Counted first (for the progress bar), then read again as it is imported: the file is never held whole.
    const total = await checkImportFile(site, binding, kind, open());
    const { documents } = await streamImport(site, binding, kind, open());
    const bar = progressBar(doctype);
    const failures: string[] = [];
    let done = 0;
    const step = () => bar(++done, total);
    await runImport(
      { site, user: admin, version: 2 },
      doctype,
      values.update ? 'Update Existing Records' : 'Insert New Records',
      documents,
      {
        done: new Map(),
        success: async () => step(),
        failure: async (_index, outcome, lines) => {
          if (!outcome.ok) failures.push(`lines ${lines.join(',')}: ${outcome.error}: ${outcome.message}`);
          step();
        },
        stopping: () => false,
      },
    );
    if (total === 0) bar(0, 0);
    console.error(`${total - failures.length} of ${total} documents imported`);
    for (const failure of failures.slice(0, 50)) console.error(`  ${failure}`);
    if (failures.length > 50) console.error(`  … and ${failures.length - 50} more`);
    return failures.length ? 1 : 0;
  });
}

/** `svc export --doctype D [--format csv|xlsx|json] [--fields JSON] [--filters JSON] [--order-by TEXT] [--out FILE]`. */
export async function exportCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      doctype: { type: 'string' },
      format: { type: 'string' },
      fields: { type: 'string' },
      filters: { type: 'string' },
      'order-by': { type: 'string' },
      out: { type: 'string' },
    },
  });
  const doctype = values.doctype;
  if (!doctype) {
    console.error('svc export: --doctype is required');
    return 1;
  }
  // The file goes to stdout unless --out: the log lines (opening the site, the export's audit line) go to stderr.
  if (!values.out) logToStderr();
  return withSite(async (site) => {
    const caller: Caller = { site, user: admin, version: 2 };
    const params: Record<string, unknown> = {};
    if (values.fields) params.fields = values.fields;
    if (values.filters) params.filters = values.filters;
    if (values['order-by']) params.order_by = values['order-by'];
    const format = exportFormat(values.format);
    const total = await countDocuments(caller, doctype, values.filters ? { filters: values.filters } : {});
    const bar = progressBar(doctype);
    const source = await exportSource(caller, doctype, params);
    const bytes = exportStream(source, format, (n) => bar(n, total));
    if (values.out) await pipeline(bytes, createWriteStream(values.out));
    else await pipeline(bytes, process.stdout, { end: false });
    if (total === 0) bar(0, 0);
    return 0;
  });
}
