// Runs one Server Script for a caller in the sandbox pool and turns its outcome into a value or an error of the one
// hierarchy: frappe.throw → 400 ValidationError; an error of a host call → that error (e.g. 403); anything else the
// script does wrong (its own exception, CPU, memory, stack, result size) → 500 ServerScriptError.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Caller } from '../document/caller';
import {
  AppError,
  AuthenticationError,
  ERROR_CLASSES,
  InternalServerError,
  ServerScriptError,
  ServerScriptNotEnabled,
  ValidationError,
} from '../errors/errors';
import { toAppError } from '../errors/render-error';
import { logger } from '../log/logger';
import { loadUser } from '../auth/users';
import { ADMINISTRATOR } from '../site';
import { callHost, callerAs } from './host-api';
import { runInline } from './inline-sandbox';
import { sandboxPool } from './sandbox-pool';
import { DEFAULT_LIMITS, type HostReply, type JobOutcome } from './sandbox-protocol';
import type { ServerScript } from './script-store';

/** How deep scripts may nest (a script saves a document whose event runs a script, ...). */
export const MAX_SCRIPT_DEPTH = 5;

/** How long the event loop may block for a script run inside a write transaction before it waits asynchronously. */
const TX_WAIT_MS = 2;

/** The nesting depth of the script whose host call is running (undefined outside any script). */
const depth = new AsyncLocalStorage<number>();

/** What a script call produced. */
export interface ScriptResult {
  /** `frappe.response.message`. */
  message?: unknown;
  /** The global `doc` after the script (document events). */
  doc?: unknown;
  /** The global `conditions` after the script (permission queries). */
  conditions?: unknown;
}

/**
 * Writes a `frappe.log` line to the process log: the script's text is one JSON-encoded field (`line`) of a normal,
 * redacted log line, so a newline in it cannot start a forged line.
 */
export function logScriptLine(script: string, line: string): void {
  logger().info({ script, line }, 'server script log');
}

/** Where `frappe.log` lines go (the process log; tests may replace it). */
export let scriptLogSink = logScriptLine;

/** Replaces the log sink (tests). */
export function setScriptLogSink(sink: (script: string, line: string) => void): void {
  scriptLogSink = sink;
}

/** What the guest sees of a failed host call: the error's class, status and message (internal details hidden). */
function hostErrorReply(err: unknown): HostReply {
  const e = toAppError(err);
  const message = e instanceof InternalServerError ? 'Internal Server Error' : e.message;
  return { err: { excType: e.excType, status: e.status, message } };
}

/** The error of a failed outcome. */
function failure(script: ServerScript, outcome: Exclude<JobOutcome, { ok: true }>): AppError {
  const label = `Server Script ${script.name}`;
  switch (outcome.kind) {
    case 'throw':
      return new ValidationError(outcome.message);
    case 'host': {
      const Cls = (ERROR_CLASSES as Record<string, new (m: string) => AppError>)[outcome.error.excType];
      const err = Cls ? new Cls(outcome.error.message) : undefined;
      return err && err.status === outcome.error.status
        ? err
        : new ServerScriptError(`${label}: ${outcome.error.message}`);
    }
    case 'timeout':
      return new ServerScriptError(
        outcome.limit === 'wall'
          ? `${label} exceeded its wall-clock time limit (${DEFAULT_LIMITS.wallMs} ms outside host calls)`
          : `${label} exceeded its CPU time limit (${DEFAULT_LIMITS.cpuMs} ms)`,
      );
    case 'result':
      return new ServerScriptError(`${label} returned more than ${DEFAULT_LIMITS.maxResultBytes} characters`);
    case 'memory':
      return new ServerScriptError(
        `${label} ran out of memory (its budget is ${DEFAULT_LIMITS.memoryBytes / 1024 / 1024} MB)`,
      );
    case 'syntax':
      return new ServerScriptError(`${label} does not compile: ${outcome.error.message}`);
    default:
      return new ServerScriptError(`${label} failed: ${outcome.message ?? 'unknown error'}`);
  }
}

/** Whether server scripts run on the site (site config `server_script_enabled`, default true). */
export function scriptsEnabled(caller: Caller): boolean {
  return caller.site.config.site.server_script_enabled !== false;
}

/** The nesting level a run of `script` by `caller` would have; throws when scripts are off or nested too deep. */
function admit(script: ServerScript, caller: Caller): number {
  if (!scriptsEnabled(caller))
    throw new ServerScriptNotEnabled(
      'Server Scripts are disabled. Please enable server scripts from bench configuration.',
    );
  const level = (depth.getStore() ?? 0) + 1;
  if (level > MAX_SCRIPT_DEPTH)
    throw new ServerScriptError(`Server scripts nested more than ${MAX_SCRIPT_DEPTH} deep (${script.name})`);
  return level;
}

/** What a run that ended well produced (an inline run's values, or the JSON a worker sent); logs to the server log. */
function resultOf(
  script: ServerScript,
  outcome: { logs?: string[]; json?: string; value?: ScriptResult },
): ScriptResult {
  if (outcome.logs) for (const line of outcome.logs) scriptLogSink(script.name, line);
  if (outcome.value) return outcome.value;
  return outcome.json ? (JSON.parse(outcome.json) as ScriptResult) : {};
}

/**
 * Who a script's host calls act as: the caller, except when Administrator runs a script someone else last saved, whose
 * calls act as that author (enabled, with the roles it has now): a script never does what its author could not, so a
 * System Manager's script cannot reach Administrator's rights by waiting for Administrator to trigger it.
 */
async function hostCaller(script: ServerScript, caller: Caller): Promise<Caller> {
  if (caller.user.name !== ADMINISTRATOR || !script.modifiedBy || script.modifiedBy === ADMINISTRATOR)
    return caller;
  const author = await loadUser(caller.tx?.trx ?? caller.site.db.knex, script.modifiedBy);
  if (!author || !author.enabled)
    throw new AuthenticationError(`User ${script.modifiedBy} is disabled or no longer exists`);
  return callerAs(caller, { name: author.name, roles: author.roles });
}

/**
 * Runs `script` as `caller` with `input` (`form_dict`, `doc`, and `conditions: true` to read them back); host calls
 * run as the same caller (as the script's author when the caller is Administrator, see hostCaller). `messages`
 * collects the messages the operations leave for the user.
 */
export async function runScript(
  script: ServerScript,
  caller: Caller,
  input: { form_dict?: Record<string, unknown>; doc?: Record<string, unknown>; conditions?: boolean },
  messages: string[] = [],
): Promise<ScriptResult> {
  const level = admit(script, caller);
  const full = { ...input, user: caller.user.name };
  let host: Promise<Caller> | undefined;
  // A straight-line script runs here and now (inline-sandbox.ts); any other, or one whose inline run was void, in a
  // worker.
  const outcome =
    runInline(script.script, 'script.js', full) ??
    (await sandboxPool().run(
      script.script,
      'script.js',
      JSON.stringify(full),
      (name, args) =>
        depth.run(level, async () =>
          callHost(await (host ??= hostCaller(script, caller)), messages, name, args),
        ),
      hostErrorReply,
      // Inside a write transaction (document events) other writers wait for this call anyway: a short script's outcome
      // is taken without a turn of the event loop (blocked at most TX_WAIT_MS, then waited for asynchronously).
      { nested: level > 1, waitMs: caller.tx ? TX_WAIT_MS : 0 },
    ));
  if (!outcome.ok) {
    for (const line of outcome.logs ?? []) scriptLogSink(script.name, line);
    throw failure(script, outcome);
  }
  return resultOf(script, outcome);
}

/** Compiles `source` in the sandbox: a syntax error is a 400 naming its line and column. */
export async function assertCompiles(source: string): Promise<void> {
  const outcome = await sandboxPool().compile(source, 'script.js');
  if (outcome.ok) return;
  if (outcome.kind === 'syntax') {
    const at = /script\.js:(\d+):(\d+)/.exec(outcome.error.stack);
    const where = at ? ` at line ${at[1]}, column ${at[2]}` : '';
    throw new ValidationError(`Script: ${outcome.error.name}${where}: ${outcome.error.message}`);
  }
  throw new ValidationError(
    `Script could not be compiled: ${'message' in outcome ? String(outcome.message) : ''}`,
  );
}

/**
 * The synchronous part of runScript: runs `script` inline (inline-sandbox.ts) when it can and its run ended well, and
 * returns what it produced; undefined when runScript must run it (in a worker). Saves the request the promise turns of
 * an async call (API scripts, document events). Throws as runScript does when scripts are off or nested too deep.
 * `doc` is only read (as JSON, the fields the script names), so a document may be passed as it is.
 */
export function runScriptInline(
  script: ServerScript,
  caller: Caller,
  input: { form_dict?: Record<string, unknown>; doc?: Record<string, unknown> },
): ScriptResult | undefined {
  admit(script, caller);
  const outcome = runInline(
    script.script,
    'script.js',
    input.doc === undefined
      ? { form_dict: input.form_dict, user: caller.user.name }
      : { form_dict: input.form_dict, doc: input.doc, user: caller.user.name },
  );
  return outcome?.ok ? resultOf(script, outcome) : undefined;
}
