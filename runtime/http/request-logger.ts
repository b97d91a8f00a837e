// The log of one request: the process logger with the request's id (`req_id`) on every line, made on first use.
import type { Logger } from 'pino';
import { logger } from '../log/logger';
import type { AppContext } from './state';

/** The logger of the request: every line it writes carries `req_id`. */
export function requestLogger(ctx: AppContext): Logger {
  const state = ctx.state;
  // A pino child costs a few microseconds: made only when the request logs something.
  return (state.log ??= logger().child({ req_id: state.requestId }));
}
