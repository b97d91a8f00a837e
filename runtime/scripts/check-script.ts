// The checks a Server Script document passes before it is stored: the saver is a System Manager, the fields its type
// needs are there, and the script compiles (a syntax error is a 400 naming its line and column).
import { PermissionError, ValidationError } from '../errors/errors';
import { BUILTIN_METHODS } from '../methods/builtins';
import type { Registry } from '../registry/registry';
import { ADMINISTRATOR, type SessionUser } from '../site';
import { assertCompiles } from './run-script';
import { assertSchedulable } from './script-schedule';

/** The DocType events a `DocType Event` script may name (the Server Script DocType's options). */
export const DOCTYPE_EVENTS = [
  'Before Insert',
  'Before Validate',
  'Before Save',
  'After Insert',
  'After Save',
  'Before Submit',
  'After Submit',
  'Before Cancel',
  'After Cancel',
  'Before Delete',
  'After Delete',
  'Before Save (Submitted Document)',
  'After Save (Submitted Document)',
];

/**
 * Throws unless `data` (a Server Script about to be saved by `user`) may be stored; a Scheduler Event's cron expression
 * is read in `timeZone` (site config `time_zone`).
 */
export async function checkServerScript(
  user: SessionUser | undefined,
  registry: Registry,
  data: Record<string, unknown>,
  timeZone = 'UTC',
): Promise<void> {
  if (user && user.name !== ADMINISTRATOR && !user.roles.has('System Manager'))
    throw new PermissionError('Only a System Manager may save a Server Script');
  const type = data.script_type;
  const reference = typeof data.reference_doctype === 'string' ? data.reference_doctype : '';
  if (type === 'API') {
    const method = typeof data.api_method === 'string' ? data.api_method.trim() : '';
    if (!method) throw new ValidationError('API Method is mandatory for an API script');
    if (method.length > 140 || /[\s/]/.test(method))
      throw new ValidationError('API Method must be at most 140 characters, without spaces or slashes');
    if (BUILTIN_METHODS.has(method))
      throw new ValidationError(
        `API Method ${method} is a built-in method and cannot be replaced by a script`,
      );
  } else if (type === 'DocType Event' || type === 'Permission Query') {
    if (!reference || !registry.get(reference))
      throw new ValidationError('Reference DocType must name a DocType');
    if (type === 'DocType Event' && !DOCTYPE_EVENTS.includes(String(data.doctype_event)))
      throw new ValidationError(`DocType Event must be one of: ${DOCTYPE_EVENTS.join(', ')}`);
  } else if (type === 'Scheduler Event') {
    assertSchedulable(data.event_frequency, data.cron_format, timeZone);
  }
  await assertCompiles(typeof data.script === 'string' ? data.script : '');
}
