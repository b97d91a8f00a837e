// One attempt of a delivery, run by a background job: the Queued log row's body sent to its URL (checked again
// against the address policy, and connected to at the address checked) with the webhook's current headers, method,
// timeout and secret; then, in one transaction, the row marked Success, Failed or Exhausted and, for a failure with
// retries left, the next attempt's row queued at `now + webhook_retry_schedule[attempt - 1]` seconds.
import type { DocData } from '../document/store';
import { now } from '../document/values';
import { inWriteTransaction } from '../db/write-transaction';
import type { Site } from '../site';
import { sendRequest, type SendOutcome } from './send-request';
import { signatureHeaders } from './signatures';
import { LOG_TABLE, datetimeAt, insertLogRow, type LogStatus } from './request-log';
import { WEBHOOKS } from './webhook-index';
import { readWebhookSecret } from './webhook-secret';
import { retrySchedule, siteAllowedHosts } from './webhook-settings';
import { vetUrl } from './vet-url';

/** What an attempt ended with, as the log row records it. */
interface Attempted {
  headers: Record<string, string>;
  outcome: SendOutcome;
  /** No retry can do better (the webhook is gone). */
  final?: boolean;
}

/** Sends the attempt of `log` (a Queued row); never throws for the receiver's or the URL's fault. */
async function attempt(site: Site, log: DocData): Promise<Attempted> {
  const knex = site.db.knex;
  const stored = JSON.parse(String(log.headers || '{}')) as Record<string, string>;
  const webhook = (await knex('tabWebhook')
    .where({ name: log.webhook })
    .first('name', 'enable_security', 'timeout')) as
    { name: string; enable_security: unknown; timeout: unknown } | undefined;
  if (!webhook)
    return {
      headers: stored,
      outcome: { ok: false, error: `Webhook ${String(log.webhook)} no longer exists` },
      final: true,
    };
  const secret = Number(webhook.enable_security)
    ? await readWebhookSecret(site, knex, webhook.name)
    : undefined;
  const body = String(log.data ?? '');
  const headers = {
    ...stored,
    ...signatureHeaders(String(log.message_id), Math.floor(Date.now() / 1000), body, secret),
  };
  let target;
  try {
    target = await vetUrl(log.url, siteAllowedHosts(site), WEBHOOKS.of(site).lookup);
  } catch (err) {
    return { headers, outcome: { ok: false, error: (err as Error).message } };
  }
  const timeoutMs = Math.max(1, Number(webhook.timeout) || 5) * 1000;
  return {
    headers,
    outcome: await sendRequest(target, String(log.request_method || 'POST'), headers, body, timeoutMs),
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

/**
 * Runs the attempt of the log row `name` if it is still Queued (another worker may have run it: at least once, not
 * twice where it can be seen). Returns the row's new status, or undefined when it was not Queued. `due` is told the
 * time of a retry it queued.
 */
export async function deliverLogRow(
  site: Site,
  name: string,
  due: (at: number) => void = () => undefined,
): Promise<LogStatus | undefined> {
  const log = (await site.db.knex(LOG_TABLE).where({ name }).first()) as DocData | undefined;
  if (!log || log.status !== 'Queued') return undefined;
  const { headers, outcome, final } = await attempt(site, log);
  const attempts = Number(log.attempts) || 1;
  const schedule = retrySchedule(site);
  const retryAt =
    !outcome.ok && !final && attempts <= schedule.length
      ? Date.now() + (schedule[attempts - 1] as number) * 1000
      : undefined;
  const status: LogStatus = outcome.ok ? 'Success' : retryAt === undefined ? 'Exhausted' : 'Failed';
  const changed = await inWriteTransaction(site.db, async (q) => {
    const updated = await q(LOG_TABLE)
      .where({ name, status: 'Queued' })
      .update({
        status,
        headers: JSON.stringify(headers),
        response: 'status' in outcome ? outcome.body : null,
        error: errorOf(outcome),
        next_retry: retryAt === undefined ? null : datetimeAt(retryAt),
        modified: now(),
      });
    if (updated !== 1 || retryAt === undefined) return updated === 1;
    await insertLogRow(
      site,
      q,
      {
        webhook: String(log.webhook),
        reference_doctype: String(log.reference_doctype ?? ''),
        reference_document: String(log.reference_document ?? ''),
        user: String(log.user ?? ''),
        url: String(log.url),
        request_method: String(log.request_method || 'POST'),
        headers: String(log.headers || '{}'),
        data: String(log.data ?? ''),
        message_id: String(log.message_id),
        status: 'Queued',
        attempts: attempts + 1,
        next_retry: datetimeAt(retryAt),
      },
      String(log.owner || 'Administrator'),
    );
    return true;
  });
  if (changed && retryAt !== undefined) due(retryAt);
  return changed ? status : undefined;
}
