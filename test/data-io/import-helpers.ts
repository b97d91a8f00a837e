// Helpers of the Data Import tests: upload a file, make a Data Import for it, run methods, wait for the job.
import type { TestSite } from '../helpers/test-site';

const METHOD = '/api/v2/method/frappe.core.doctype.data_import.data_import';

/** Uploads `content` as a private file; answers its file_url. */
export async function uploadFile(
  t: TestSite,
  auth: string,
  content: Buffer | string,
  fileName: string,
): Promise<string> {
  const res = await t.http
    .post('/api/method/upload_file')
    .set('Authorization', auth)
    .field('is_private', '1')
    .attach('file', Buffer.isBuffer(content) ? content : Buffer.from(content), { filename: fileName });
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.message.file_url as string;
}

/** Creates a Data Import of `doctype` for an uploaded file; answers its name. */
export async function newImport(
  t: TestSite,
  auth: string,
  doctype: string,
  fileUrl: string,
  importType = 'Insert New Records',
): Promise<string> {
  const res = await t.http
    .post('/api/v2/document/Data Import')
    .set('Authorization', auth)
    .send({ reference_doctype: doctype, import_type: importType, import_file: fileUrl });
  if (res.status !== 201) throw new Error(`Data Import: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.name as string;
}

/** Calls a Data Import method (POST, JSON body). */
export function callImportMethod(t: TestSite, auth: string, method: string, body: Record<string, unknown>) {
  return t.http.post(`${METHOD}.${method}`).set('Authorization', auth).send(body);
}

/** Waits for a job to finish or fail; answers its status record. */
export async function waitForJob(t: TestSite, auth: string, id: string, ms = 120_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const res = await t.http.get(`/api/v2/job/${id}`).set('Authorization', auth);
    const job = res.body.data;
    if (job && (job.status === 'finished' || job.status === 'failed')) return job;
    if (Date.now() > end) throw new Error(`job ${id} still ${job?.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Uploads a file, makes a Data Import of it, starts it and waits; answers the import's name and the finished job. */
export async function importFile(
  t: TestSite,
  auth: string,
  doctype: string,
  content: Buffer | string,
  fileName: string,
  importType = 'Insert New Records',
): Promise<{ name: string; job: any }> {
  const url = await uploadFile(t, auth, content, fileName);
  const name = await newImport(t, auth, doctype, url, importType);
  const start = await callImportMethod(t, auth, 'form_start_import', { data_import: name });
  if (start.status !== 200) throw new Error(`start: ${start.status} ${JSON.stringify(start.body)}`);
  return { name, job: await waitForJob(t, auth, start.body.data.job_id) };
}

/** The body of a raw (file) answer as a Buffer. */
export function binary(res: { body: unknown; text?: string }): Buffer {
  return Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.text ?? '');
}
