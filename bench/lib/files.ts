// File scenarios' helpers: upload through upload_file (multipart, as a client sends it), several at a time.
import { performance } from 'node:perf_hooks';

/** Uploads `bytes` as `name`; returns the stored file's URL (throws unless 200). */
export async function uploadBytes(
  base: string,
  auth: string,
  bytes: Uint8Array,
  name: string,
): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/api/method/upload_file`, {
    method: 'POST',
    headers: { authorization: auth },
    body: form,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`upload ${name}: ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { message: { file_url: string } }).message.file_url;
}

/** Runs `count` uploads, `parallel` at a time, of what `payload(i)` gives; returns the elapsed seconds. */
export async function uploadMany(
  base: string,
  auth: string,
  count: number,
  parallel: number,
  payload: (i: number) => Uint8Array,
): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await uploadBytes(base, auth, payload(i), `bench-${i}.bin`);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return (performance.now() - started) / 1000;
}
