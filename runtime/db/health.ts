// DatabaseHealth: whether the database answers, as requests find out. The first "unavailable" error of an outage
// logs one line and starts a probe (`select 1` every second); the probe's first success logs one line and ends it.
// Requests meanwhile get 503 without a line each. /api/ready reads the state.
import type { Logger } from 'pino';
import type { DriverErrors } from './backend';
import { unavailableReason } from './unavailable';

/** The state of the database as the service last saw it. */
export interface HealthState {
  up: boolean;
  /** The code of the error that started the outage. */
  reason?: string;
  /** When the current state began (ms since epoch). */
  since: number;
}

/** Tracks outages of one database; `probe` must settle within the statement timeout. */
export class DatabaseHealth {
  private current: HealthState = { up: true, since: Date.now() };
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly log: () => Logger,
    private readonly errors: DriverErrors,
    private readonly probeEveryMs = 1000,
  ) {}

  /** The current state (a copy). */
  get state(): HealthState {
    return { ...this.current };
  }

  /** A request met an "unavailable" error: the first of an outage logs and starts probing. */
  reportUnavailable(reason: string): void {
    if (!this.current.up) return;
    this.current = { up: false, reason, since: Date.now() };
    this.log().error({ event: 'database_unavailable', reason }, 'database unavailable: answering 503');
    this.timer = setInterval(() => {
      if (this.probing) return;
      this.probing = true;
      void this.check().finally(() => (this.probing = false));
    }, this.probeEveryMs);
    this.timer.unref();
  }

  /** Runs the probe once, fresh (also for /api/ready); true when the database answered. */
  async check(): Promise<boolean> {
    try {
      await this.probe();
      if (!this.current.up) {
        const downMs = Date.now() - this.current.since;
        this.current = { up: true, since: Date.now() };
        this.stopProbe();
        this.log().warn({ event: 'database_available', down_ms: downMs }, 'database available again');
      }
      return true;
    } catch (err) {
      this.reportUnavailable(unavailableReason(err, this.errors) ?? 'PROBE_FAILED');
      return false;
    }
  }

  /** Stops probing (site close). */
  stopProbe(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
