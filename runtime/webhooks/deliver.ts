// The attempts of a batch of deliveries, run by a background job: each Queued log row's body sent to its URL (checked
// again against the address policy, and connected to at the address checked) with the webhook's current URL, method,
// timeout and secret (a webhook disabled since sends nothing more: its rows end Exhausted); then each row marked
// Success, Failed or Exhausted and, for a failure with retries left, the next attempt's row queued at
// `now + webhook_retry_schedule[attempt - 1]` seconds. The batch's rows go to one lane per receiver (host and port) in
// this process (receiver-lane.ts): a receiver that hangs until the timeout delays its own rows, not the other
// receivers' sending or recording, and holds one job's worker place, the job that opened its lane (the others hand
// their rows to it and end). A run starts no attempt once RUN_BUDGET_MS has passed since its rows were claimed (a job
// that waited for a worker has less left), well inside the claim, and gives the rows its lanes did not start back to
// the dispatcher (due now): a lane of hundreds of rows to a receiver that hangs would otherwise outlast the claim, and
// its rows would be claimed and sent again. One read of the rows and one of their webhooks per batch, one write per
// group of finished attempts: under load a job carries many rows, and on
// SQLite every write transaction is taken from the writes of the requests. Inside each write, one locking read finds
// the rows still Queued (another worker may have recorded one) and each outcome is the row store's full-row update (a
// prepared statement on SQLite, where a knex UPDATE per row compiled and prepared its text each time); a URL is vetted
// once per batch (its attempts leave together) and sent to over a kept-alive connection (receiver-pools.ts).
import type { Knex } from 'knex';
import { decodeRow } from '../db/document-rows';
import type { DocData } from '../db/row-store';
import { now } from '../db/stored-values';
import { inWriteTransaction } from '../db/write-transaction';
import type { Site } from '../site';
import type { ReceiverPools } from './receiver-pools';
import { runInLane } from './receiver-lane';
import { MAX_TIMEOUT_S, sendRequest, type SendOutcome } from './send-request';
import { signatureHeaders } from './signatures';
import {
  LEASE_MS,
  LOG_DOCTYPE,
  LOG_TABLE,
  datetimeAt,
  datetimeNow,
  insertLogRow,
  type LogStatus,
} from './request-log';
import { WEBHOOKS } from './webhook-index';
import { readWebhookSecret } from './webhook-secret';
import { retrySchedule, siteAllowedHosts } from './webhook-settings';
import { vetUrl, type VettedUrl } from './vet-url';

/**
 * How long a run starts attempts, from its rows' claim: 4 minutes. Its last attempt ends within MAX_TIMEOUT_S
 * (5 minutes) after that, so the run is done a minute before the claim (LEASE_MS, 10 minutes) lets another process
 * take the rows; that minute is for the last write. Half the lease would end with the lease.
 */
export const RUN_BUDGET_MS = LEASE_MS - MAX_TIMEOUT_S * 1000 - 60_000;

/**
 * When a run of `logs` starts no more attempts (ms): RUN_BUDGET_MS after their earliest claim (a claimed row's
 * `next_retry`, `YYYY-MM-DD HH:MM:SS` UTC, is when the claim ends).
 */
function claimDeadline(logs: readonly DocData[]): number {
  let deadline = Infinity;
  for (const log of logs) {
    const claimEnds = Date.parse(`${String(log.next_retry).slice(0, 19).replace(' ', 'T')}Z`);
    if (Number.isFinite(claimEnds)) deadline = Math.min(deadline, claimEnds - (LEASE_MS - RUN_BUDGET_MS));
  }
  return deadline;
}

/** What a webhook's attempts need of it now. */
interface WebhookNow {
  enabled: boolean;
  url: string;
  method: string;
  secret: string | undefined;
  timeoutMs: number;
}

/** What an attempt ended with, as the log row records it. */
interface Attempted {
  log: DocData;
  headers: Record<string, string>;
  outcome: SendOutcome;
  /** No retry can do better (the webhook is gone or disabled). */
  final?: boolean;
  /** Where the attempt went (the webhook's URL and method now), or was to go. */
  url: string;
  method: string;
}

/** The webhooks of `names` as they are now (enabled, URL, method, secret, timeout); a deleted one is absent. */
async function webhooksNow(site: Site, knex: Knex, names: string[]): Promise<Map<string, WebhookNow>> {
  const rows = (await knex('tabWebhook')
    .whereIn('name', names)
    .select('name', 'enabled', 'request_url', 'request_method', 'enable_security', 'timeout')) as {
    name: string;
    enabled: unknown;
    request_url: unknown;
    request_method: unknown;
    enable_security: unknown;
    timeout: unknown;
  }[];
  const found = new Map<string, WebhookNow>();
  for (const row of rows)
    found.set(row.name, {
      enabled: Number(row.enabled) === 1,
      url: String(row.request_url ?? '').trim(),
      method: String(row.request_method || 'POST'),
      secret: Number(row.enable_security) ? await readWebhookSecret(site, knex, row.name) : undefined,
      timeoutMs: Math.min(MAX_TIMEOUT_S, Math.max(1, Number(row.timeout) || 5)) * 1000,
    });
  return found;
}

/** The receiver a URL sends to (its host and port), which names its lane; the URL itself when it does not parse. */
function receiverOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The URL checks of one batch: each URL vetted once, when its first attempt leaves. */
type UrlChecks = Map<string, Promise<VettedUrl>>;

/** Sends the attempt of `log` (a Queued row); never throws for the receiver's or the URL's fault. */
async function attempt(
  site: Site,
  log: DocData,
  webhook: WebhookNow | undefined,
  pools: ReceiverPools,
  checks: UrlChecks,
): Promise<Attempted> {
  const stored = JSON.parse(String(log.headers || '{}')) as Record<string, string>;
  const url = webhook?.url ?? String(log.url);
  const method = webhook?.method ?? String(log.request_method || 'POST');
  if (!webhook || !webhook.enabled)
    return {
      log,
      headers: stored,
      outcome: {
        ok: false,
        error: `Webhook ${String(log.webhook)} ${webhook ? 'is disabled' : 'no longer exists'}`,
      },
      final: true,
      url,
      method,
    };
  const body = String(log.data ?? '');
  const headers = {
    ...stored,
    ...signatureHeaders(String(log.message_id), Math.floor(Date.now() / 1000), body, webhook.secret),
  };
  let target;
  try {
    let check = checks.get(url);
    if (!check) checks.set(url, (check = vetUrl(url, siteAllowedHosts(site), WEBHOOKS.of(site).lookup)));
    target = await check;
  } catch (err) {
    return { log, headers, outcome: { ok: false, error: (err as Error).message }, url, method };
  }
  return {
    log,
    headers,
    outcome: await sendRequest(target, method, headers, body, webhook.timeoutMs, pools),
    url,
    method,
  };
}

/** The error text of a failed attempt. */
function errorOf(outcome: SendOutcome): string | null {
  if ('error' in outcome) return outcome.error;
  if (outcome.ok) return null;
  if (outcome.location)
    return `HTTP ${outcome.status}: redirect to ${outcome.location.slice(0, 500)} not followed`;
  return `HTTP ${outcome.status}`;
}

/** Records one attempt of a row still Queued in `q`: its outcome and, for a failure with retries left, the next row. */
async function record(
  site: Site,
  q: Knex,
  done: Attempted,
  schedule: readonly number[],
): Promise<{ status: LogStatus; retryAt?: number } | undefined> {
  const { log, headers, outcome, final, url, method } = done;
  const attempts = Number(log.attempts) || 1;
  const retryAt =
    !outcome.ok && !final && attempts <= schedule.length
      ? Date.now() + (schedule[attempts - 1] as number) * 1000
      : undefined;
  const status: LogStatus = outcome.ok ? 'Success' : retryAt === undefined ? 'Exhausted' : 'Failed';
  const binding = site.registry.get(LOG_DOCTYPE);
  if (!binding) throw new Error(`${LOG_DOCTYPE} is not a DocType of this site`);
  const stored = decodeRow(binding.meta, log);
  const recorded: DocData = Object.assign({}, stored, {
    status,
    url,
    request_method: method,
    headers: JSON.stringify(headers),
    response: 'status' in outcome ? outcome.body : null,
    error: errorOf(outcome),
    next_retry: retryAt === undefined ? null : datetimeAt(retryAt),
    modified: now(),
  });
  await site.rows.update(q, binding, recorded, stored);
  if (retryAt === undefined) return { status };
  await insertLogRow(
    site,
    q,
    {
      webhook: String(log.webhook),
      reference_doctype: String(log.reference_doctype ?? ''),
      reference_document: String(log.reference_document ?? ''),
      user: String(log.user ?? ''),
      url,
      request_method: method,
      headers: String(log.headers || '{}'),
      data: String(log.data ?? ''),
      message_id: String(log.message_id),
      status: 'Queued',
      attempts: attempts + 1,
      next_retry: datetimeAt(retryAt),
    },
    String(log.owner || 'Administrator'),
  );
  return { status, retryAt };
}

/**
 * Gives back rows a run did not start: still Queued, due now, so the dispatcher queues them again on its next look.
 * Only a row still Queued under the claim this run read (its `next_retry`) is changed; returns how many were.
 */
async function releaseRows(site: Site, rows: readonly DocData[]): Promise<number> {
  const byClaim = new Map<string, string[]>();
  for (const row of rows) {
    const claim = String(row.next_retry);
    const names = byClaim.get(claim);
    if (names) names.push(String(row.name));
    else byClaim.set(claim, [String(row.name)]);
  }
  const dueNow = datetimeNow();
  return inWriteTransaction(site.db, async (q) => {
    let released = 0;
    for (const [claim, names] of byClaim)
      released += await q(LOG_TABLE)
        .whereIn('name', names)
        .andWhere({ status: 'Queued', next_retry: claim })
        .update({ next_retry: dueNow });
    return released;
  });
}

/**
 * Runs the attempts of the log rows `names` that are still Queued (another worker may have run one: at least once,
 * not twice where it can be seen), in one lane per receiver, recording each row as it finishes. Rows for a receiver
 * whose lane is open in this process are handed to it (`handed`: that lane's run records them). In the lanes this run
 * opens, no attempt starts RUN_BUDGET_MS after the rows' claim, nor once the run has lasted `budgetMs` (default
 * RUN_BUDGET_MS), nor once `stopping()` (the worker shuts down): the rows not started (rows handed to them included)
 * are given back, due now (`deferred`), and those under way are recorded as they end. Returns how many rows ended in
 * each status. `due` is told the time of each retry queued, and now when rows were given back.
 */
export async function deliverLogRows(
  site: Site,
  names: readonly string[],
  pools: ReceiverPools,
  due: (at: number) => void = () => undefined,
  { budgetMs = RUN_BUDGET_MS, stopping = () => false }: { budgetMs?: number; stopping?: () => boolean } = {},
): Promise<Record<string, number>> {
  const started = Date.now();
  const knex = site.db.knex;
  const logs = (await knex(LOG_TABLE)
    .whereIn('name', names)
    .andWhere({ status: 'Queued' })
    .select()) as DocData[];
  const counts: Record<string, number> = { skipped: names.length - logs.length };
  if (!logs.length) return counts;
  const deadline = Math.min(claimDeadline(logs), started + budgetMs);
  const mayStart = () => Date.now() < deadline && !stopping();
  const webhooks = await webhooksNow(site, knex, [...new Set(logs.map((l) => String(l.webhook)))]);
  const checks: UrlChecks = new Map();
  const schedule = retrySchedule(site);
  // One lane per receiver (the host an attempt goes to): a receiver that hangs holds its own lane's attempts and
  // records, not those of the other receivers.
  const byReceiver = new Map<string, DocData[]>();
  for (const log of logs) {
    const key = receiverOf(webhooks.get(String(log.webhook))?.url ?? String(log.url));
    const rows = byReceiver.get(key);
    if (rows) rows.push(log);
    else byReceiver.set(key, [log]);
  }
  const send = (log: DocData) => attempt(site, log, webhooks.get(String(log.webhook)), pools, checks);
  const recordAll = async (finished: Attempted[]) => {
    const recorded = await inWriteTransaction(site.db, async (q) => {
      // Rows another worker recorded since they were read are left as it recorded them (locked until the commit).
      const queued = (await q(LOG_TABLE)
        .whereIn(
          'name',
          finished.map((done) => String(done.log.name)),
        )
        .andWhere({ status: 'Queued' })
        .forUpdate()
        .select('name')) as { name: string }[];
      const still = new Set(queued.map((row) => row.name));
      const results = [];
      for (const attempted of finished)
        results.push(
          still.has(String(attempted.log.name)) ? await record(site, q, attempted, schedule) : undefined,
        );
      return results;
    });
    for (const result of recorded) {
      const key = result?.status ?? 'skipped';
      counts[key] = (counts[key] ?? 0) + 1;
      if (result?.retryAt !== undefined) due(result.retryAt);
    }
  };
  const run = { send, recordAll };
  const lanes: Promise<DocData[]>[] = [];
  for (const [receiver, rows] of byReceiver) {
    const lane = runInLane(site, receiver, rows, run, mayStart);
    if (lane) lanes.push(lane);
    else counts.handed = (counts.handed ?? 0) + rows.length;
  }
  const unstarted = (await Promise.all(lanes)).flat();
  if (unstarted.length) {
    const deferred = await releaseRows(site, unstarted);
    counts.deferred = deferred;
    counts.skipped = (counts.skipped ?? 0) + unstarted.length - deferred;
    if (deferred) due(Date.now());
  }
  return counts;
}
