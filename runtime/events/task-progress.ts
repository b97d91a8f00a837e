// Background job progress for sockets (`task_subscribe(job_id)`): while a task room has a socket, the job is read from
// the site's queue every TASK_POLL_MS, whichever process runs it (the embedded jobs table and BullMQ both keep its
// progress); `task_progress {task_id, progress, total}` goes out when the count of finished items moves and
// `task_complete {task_id, status, result, error}` once the job has finished or failed (then the room is let go). Each
// socket's user is checked as of then before it is sent either: one no longer allowed leaves the room.
import { jobQueueOf } from '../jobs/job-queue';
import { logger } from '../log/logger';
import { ADMINISTRATOR, type SessionUser, type Site } from '../site';
import { EventReadChecks } from './event-access';
import { emitTo, type RealtimeSocket, type SocketRooms } from './socket-rooms';

/** How often a followed job is read. */
export const TASK_POLL_MS = 250;

/** The room of a job's progress (Frappe's name). */
export const taskRoom = (id: string): string => `task_progress:${id}`;

/** True when `user` may follow `job`: its own; System Manager and Administrator any. */
function mayFollowJob(user: SessionUser, job: { user: string }): boolean {
  return job.user === user.name || user.name === ADMINISTRATOR || user.roles.has('System Manager');
}

/** The jobs sockets follow, each read on a timer while its room has a socket. */
export class TaskWatch {
  private readonly watched = new Map<string, { timer: NodeJS.Timeout; done: number; reading: boolean }>();

  constructor(
    private readonly site: Site,
    private readonly rooms: SocketRooms,
  ) {}

  /** True when `user` may follow job `id` (its own job; System Manager and Administrator: any). */
  async mayFollow(socket: RealtimeSocket, id: string): Promise<boolean> {
    const job = await jobQueueOf(this.site)?.get(id);
    return job !== undefined && mayFollowJob(socket.data.user, job);
  }

  /**
   * The sockets of `id`'s room whose user may still follow the job, as of now (a role removed or a user disabled since
   * it subscribed counts, as for document events); the others leave the room.
   */
  private async stillFollowing(id: string, job: { user: string }): Promise<RealtimeSocket[]> {
    const checks = new EventReadChecks(this.site);
    const sockets: RealtimeSocket[] = [];
    for (const socket of this.rooms.members(taskRoom(id))) {
      const user = await checks.user(socket.data.user.name);
      if (user && mayFollowJob(user, job)) sockets.push(socket);
      else this.rooms.leave(socket, taskRoom(id));
    }
    return sockets;
  }

  /** Starts reading job `id` (its room has a socket now); the first read is at once. */
  follow(id: string): void {
    if (this.watched.has(id)) return;
    const entry = { timer: setInterval(() => void this.poll(id), TASK_POLL_MS), done: -1, reading: false };
    entry.timer.unref();
    this.watched.set(id, entry);
    void this.poll(id);
  }

  /** Stops reading job `id` when its room is empty. */
  release(id: string): void {
    if (this.rooms.members(taskRoom(id)).size > 0) return;
    const entry = this.watched.get(id);
    if (entry) clearInterval(entry.timer);
    this.watched.delete(id);
  }

  /** Stops every timer. */
  close(): void {
    for (const entry of this.watched.values()) clearInterval(entry.timer);
    this.watched.clear();
  }

  private async poll(id: string): Promise<void> {
    const entry = this.watched.get(id);
    if (!entry || entry.reading) return;
    entry.reading = true;
    try {
      const job = await jobQueueOf(this.site)?.get(id);
      if (!job || !this.watched.has(id)) return;
      const moved = job.done !== entry.done;
      const ended = job.status === 'finished' || job.status === 'failed';
      if (!moved && !ended) return;
      const sockets = await this.stillFollowing(id, job);
      if (sockets.length === 0) return this.release(id);
      if (moved) {
        entry.done = job.done;
        emitTo(sockets, 'task_progress', { task_id: id, progress: job.done, total: job.total });
      }
      if (ended) {
        emitTo(sockets, 'task_complete', {
          task_id: id,
          status: job.status,
          result: job.result ?? null,
          error: job.error,
        });
        for (const socket of sockets) this.rooms.leave(socket, taskRoom(id));
        this.release(id);
      }
    } catch (err) {
      logger().warn(
        { event: 'task_progress_failed', err: String(err) },
        'reading a job for its sockets failed',
      );
    } finally {
      entry.reading = false;
    }
  }
}
