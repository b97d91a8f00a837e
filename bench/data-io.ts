// `npx tsx bench/data-io.ts`: the two figures of issue 35 on SQLite, in one process, one run:
// - import of BENCH_IMPORT_DOCS (default 20,000) ToDos from a CSV (Data Import, form_start_import, the job) against
//   bulk_insert of the same documents (also a job past the async threshold), each on a fresh site, in both orders; the
//   ratio is bulk_insert's time over the import's (target ≥ 0.8);
// - export of BENCH_EXPORT_ROWS (default 500,000) ToDos as CSV, XLSX and JSON to a sink that drops the bytes: rows/s (target
//   ≥ 50,000) and the growth of RSS over the run, sampled every 50 ms (target < 50 MB);
// - a Data Import preview of BENCH_PREVIEW_LINES (default 300,000) CSV lines: the growth of RSS over the request
//   (target < 100 MB: the preview reads one document at a time; it held the whole file's documents before).
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createTestSite, type TestSite } from '../test/helpers/test-site';
import { callImportMethod, importFile, newImport, uploadFile } from '../test/data-io/import-helpers';
import { exportSource } from '../runtime/data-export/export-pages';
import { type ExportFormat, exportStream } from '../runtime/data-export/export-stream';
import { ADMINISTRATOR } from '../runtime/site';

const IMPORT_DOCS = Number(process.env.BENCH_IMPORT_DOCS ?? 20_000);
const EXPORT_ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 500_000);
const PREVIEW_LINES = Number(process.env.BENCH_PREVIEW_LINES ?? 300_000);
const docs = Array.from({ length: IMPORT_DOCS }, (_, i) => ({
  description: `bench todo ${i}`,
  priority: 'Low',
}));

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await work();
  return [performance.now() - start, value];
}

async function waitForJob(t: TestSite, id: string): Promise<void> {
  for (;;) {
    const job = (await t.http.get(`/api/v2/job/${id}`).set('Authorization', t.adminToken)).body.data;
    if (job.status === 'finished') return;
    if (job.status === 'failed') throw new Error(job.error);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function bulkInsertMs(): Promise<number> {
  const t = await createTestSite({ site: { max_bulk_items: IMPORT_DOCS } });
  try {
    const [ms] = await timed(async () => {
      const res = await t.http
        .post('/api/v2/document/ToDo/bulk_insert')
        .set('Authorization', t.adminToken)
        .send({ docs });
      if (res.status === 202) await waitForJob(t, res.body.data.job_id);
      else if (res.status !== 200) throw new Error(`bulk_insert ${res.status}`);
    });
    return ms;
  } finally {
    await t.close();
  }
}

/** RSS growth of the last import (MB): the job reads the file as it imports it. */
let importRssMb = 0;

async function importMs(): Promise<number> {
  const t = await createTestSite();
  const csv = `description,priority\n${docs.map((d) => `${d.description},${d.priority}`).join('\n')}\n`;
  try {
    global.gc?.();
    const rssStart = process.memoryUsage().rss;
    let rssPeak = rssStart;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
    const [ms, { job }] = await timed(() => importFile(t, t.adminToken, 'ToDo', csv, 'bench.csv'));
    clearInterval(sampler);
    importRssMb = (rssPeak - rssStart) / 2 ** 20;
    if (job.result.success_count !== IMPORT_DOCS) throw new Error(`imported ${JSON.stringify(job.result)}`);
    return ms;
  } finally {
    await t.close();
  }
}

async function exportLine(
  format: ExportFormat,
): Promise<{ rowsPerSecond: number; rssGrowthMb: number; ms: number }> {
  const t = await createTestSite({ site: { max_page_length: 1000 } });
  try {
    const knex = t.site.db.knex;
    const stamp = '2026-01-01 00:00:00.000000';
    for (let from = 0; from < EXPORT_ROWS; from += 5000) {
      const rows = Array.from({ length: Math.min(5000, EXPORT_ROWS - from) }, (_, j) => {
        const i = from + j;
        return {
          name: `bench${String(i).padStart(8, '0')}`,
          owner: ADMINISTRATOR,
          modified_by: ADMINISTRATOR,
          creation: stamp,
          modified: stamp,
          docstatus: 0,
          idx: 0,
          status: 'Open',
          priority: 'Medium',
          description: `exported todo number ${i}`,
        };
      });
      await knex.transaction((trx) => t.site.rows.insertRows(trx, 'tabToDo', rows));
    }
    global.gc?.();
    const caller = {
      site: t.site,
      user: { name: ADMINISTRATOR, roles: new Set(['Administrator']) },
      version: 2 as const,
    };
    const rssStart = process.memoryUsage().rss;
    let rssPeak = rssStart;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
    let lines = 0;
    let bytes = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
        done();
      },
    });
    const [ms] = await timed(async () => {
      const source = await exportSource(caller, 'ToDo', {
        fields: '["name","status","priority","description"]',
      });
      await pipeline(exportStream(source, format), sink);
    });
    clearInterval(sampler);
    if (format === 'csv' && lines !== EXPORT_ROWS + 1) throw new Error(`exported ${lines - 1} rows`);
    if (bytes === 0) throw new Error(`the ${format} export wrote nothing`);
    return {
      rowsPerSecond: Math.round((EXPORT_ROWS / ms) * 1000),
      rssGrowthMb: (rssPeak - rssStart) / 2 ** 20,
      ms,
    };
  } finally {
    await t.close();
  }
}

async function previewLine(): Promise<{ rssGrowthMb: number; ms: number }> {
  const t = await createTestSite();
  try {
    const lines = Array.from({ length: PREVIEW_LINES }, (_, i) => `preview todo ${i},Low,Open`);
    const url = await uploadFile(
      t,
      t.adminToken,
      `description,priority,status\n${lines.join('\n')}\n`,
      'big.csv',
    );
    const name = await newImport(t, t.adminToken, 'ToDo', url);
    global.gc?.();
    const rssStart = process.memoryUsage().rss;
    let rssPeak = rssStart;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
    const [ms, res] = await timed(() =>
      callImportMethod(t, t.adminToken, 'get_preview_from_template', { data_import: name }),
    );
    clearInterval(sampler);
    if (res.body.data?.payload_count !== PREVIEW_LINES)
      throw new Error(`preview: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    return { rssGrowthMb: (rssPeak - rssStart) / 2 ** 20, ms };
  } finally {
    await t.close();
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_PREVIEW !== '0') {
    const preview = await previewLine();
    console.log(
      `preview of a ${PREVIEW_LINES}-line CSV import: ${Math.round(preview.ms)} ms; RSS growth ${preview.rssGrowthMb.toFixed(1)} MB (target < 100)`,
    );
  }
  if (process.env.BENCH_IMPORT !== '0') {
    // Both orders (bulk_insert, import, import, bulk_insert): on a loaded machine the load drifts within a run, and
    // the second line runs on a warmer process; the ratio is of the sums.
    const bulk = [await bulkInsertMs()];
    const imported = [await importMs(), await importMs()];
    bulk.push(await bulkInsertMs());
    const sum = (ms: number[]) => ms.reduce((a, b) => a + b, 0);
    const shown = (ms: number[]) => ms.map((m) => Math.round(m)).join(' + ');
    console.log(
      `import ${IMPORT_DOCS} ToDos from CSV: ${shown(imported)} ms; bulk_insert: ${shown(bulk)} ms; ratio ${(sum(bulk) / sum(imported)).toFixed(2)} (target ≥ 0.8); RSS growth of the second import ${importRssMb.toFixed(1)} MB`,
    );
  }
  // BENCH_EXPORT_FORMATS (default csv,xlsx,json): the formats exported, each on a fresh site.
  for (const format of (process.env.BENCH_EXPORT_FORMATS ?? 'csv,xlsx,json')
    .split(',')
    .filter(Boolean) as ExportFormat[]) {
    const exp = await exportLine(format);
    console.log(
      `export ${EXPORT_ROWS} ToDos as ${format}: ${Math.round(exp.ms)} ms, ${exp.rowsPerSecond} rows/s (target ≥ 50,000); RSS growth ${exp.rssGrowthMb.toFixed(1)} MB (target < 50)`,
    );
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
