// The bulk and job scenarios' client side: documents created or updated one request at a time (several in flight),
// a bulk request queued as a job and timed until the job has finished, and a loop that keeps a job running.

/** Runs `count` single-document requests, `concurrency` in flight; returns the answers' `data` and the seconds taken. */
export async function oneByOne(
  count: number,
  concurrency: number,
  request: (i: number) => Promise<Response>,
): Promise<{ data: any[]; seconds: number }> {
  const data: any[] = new Array(count);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await request(i);
      const text = await res.text();
      if (!res.ok) throw new Error(`request ${i}: ${res.status} ${text.slice(0, 300)}`);
      data[i] = (JSON.parse(text) as { data: unknown }).data;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { data, seconds: (performance.now() - started) / 1000 };
}

/** Polls a job until it has finished (its result) or failed (an error). */
export async function awaitJob(base: string, auth: string, id: string, pollMs = 50): Promise<any> {
  for (;;) {
    const res = await fetch(`${base}/api/v2/job/${id}`, { headers: { authorization: auth } });
    const body = (await res.json()) as { data?: { status: string; result: unknown; error: unknown } };
    if (!res.ok || !body.data)
      throw new Error(`job ${id}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    if (body.data.status === 'finished') return body.data.result;
    if (body.data.status === 'failed') throw new Error(`job ${id} failed: ${String(body.data.error)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Sends one bulk request that is queued (202) and waits for its job; returns the result and the seconds taken. */
export async function bulkJob(
  base: string,
  auth: string,
  path: string,
  body: unknown,
): Promise<{ result: any; seconds: number }> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`${path}: expected 202, got ${res.status} ${text.slice(0, 300)}`);
  const id = (JSON.parse(text) as { data: { job_id: string } }).data.job_id;
  const result = await awaitJob(base, auth, id);
  if (result.failure_count !== 0)
    throw new Error(`${path}: ${result.failure_count} items failed: ${JSON.stringify(result.failed[0])}`);
  return { result, seconds: (performance.now() - started) / 1000 };
}

/** Keeps bulk-update jobs of `names` running back to back until stopped; `stop()` resolves with the items done. */
export function jobsRunning(base: string, auth: string, names: string[]): { stop(): Promise<number> } {
  let stopped = false;
  let items = 0;
  let round = 0;
  const loop = (async () => {
    while (!stopped) {
      round++;
      const docs = names.map((name) => ({ name, description: `bench job round ${round}` }));
      const { result } = await bulkJob(base, auth, '/api/v2/document/ToDo/bulk_update', { docs });
      items += Number(result.success_count);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return items;
    },
  };
}
