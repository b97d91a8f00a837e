// GET /api/v2/job/{job_id}: a background job's status, progress, result and error, for the user who asked for it and
// System Managers; anyone else gets the same 404 as for an unknown id, so job ids reveal nothing.
import { DoesNotExistError } from '../errors/errors';
import { callerOf } from '../http/caller-of';
import type { AppContext } from '../http/state';
import { jobQueueOf, type JobView } from '../jobs/job-queue';
import { refusal } from '../permissions/doctype-permission';
import { respond } from './resource-handlers';
import type { RouteParams, RouteRow } from '../http/route-row';

/** Answers a job's status. */
export async function jobStatus(ctx: AppContext, p: RouteParams, row: RouteRow): Promise<void> {
  const caller = callerOf(ctx);
  if (caller.user.name === 'Guest') throw refusal(caller.user, 'Login required');
  const job = await jobQueueOf(caller.site)?.get(p.name);
  if (!job || (job.user !== caller.user.name && !caller.user.roles.has('System Manager')))
    throw new DoesNotExistError(`Job ${p.name.slice(0, 64)} not found`);
  const view: JobView = {
    job_id: job.id,
    status: job.status,
    progress: { done: job.done, total: job.total },
    result: job.result,
    error: job.error,
  };
  respond(ctx, row.status, 'data', view);
}
