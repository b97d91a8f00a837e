// Naming rules: hash, autoincrement, field:, format:, old-style series, naming_series:, prompt and UUID.
import { randomFillSync, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { DocData, RowStore } from '../db/row-store';
import { InvalidNameError, MandatoryError, ValidationError } from '../errors/errors';
import { assertNever } from '../meta/field-types';
import type { DocTypeMeta } from '../meta/types';
import { now } from '../db/stored-values';

function datePart(token: string, stamp: string): string | undefined {
  const [y, m, d] = [stamp.slice(0, 4), stamp.slice(5, 7), stamp.slice(8, 10)];
  switch (token) {
    case 'YYYY':
      return y;
    case 'YY':
      return y.slice(2);
    case 'MM':
      return m;
    case 'DD':
      return d;
    default:
      return undefined;
  }
}

function fieldPart(token: string, doc: DocData, meta: DocTypeMeta): string | undefined {
  if (!meta.fields.some((f) => f.fieldname === token)) return undefined;
  const value = doc[token];
  if (value === undefined || value === null || value === '')
    throw new MandatoryError(`${token} is required to make the name`);
  return String(value);
}

/** Expands an old-style series (`ABC-.YYYY.-.#####`): dot-separated tokens, `#` runs are the counter. */
async function expandSeries(
  rows: RowStore,
  trx: Knex,
  pattern: string,
  doc: DocData,
  meta: DocTypeMeta,
): Promise<string> {
  const stamp = now();
  const parts = pattern.split('.');
  let prefix = '';
  let counterWidth = 0;
  let suffix = '';
  for (const part of parts) {
    const text = /^#+$/.test(part)
      ? undefined
      : (datePart(part, stamp) ?? fieldPart(part.replace(/^\{|\}$/g, ''), doc, meta) ?? part);
    if (text === undefined) counterWidth = part.length;
    else if (counterWidth) suffix += text;
    else prefix += text;
  }
  if (!counterWidth) return prefix + suffix;
  const n = await rows.nextSeriesValue(trx, prefix);
  return `${prefix}${String(n).padStart(counterWidth, '0')}${suffix}`;
}

/** Expands a `format:` pattern (`INV-{YYYY}-{customer}-{#####}`): braces hold date parts, fields or the counter. */
async function expandFormat(
  rows: RowStore,
  trx: Knex,
  pattern: string,
  doc: DocData,
  meta: DocTypeMeta,
): Promise<string> {
  const stamp = now();
  let counter: { width: number } | undefined;
  const rendered = pattern.replace(/\{([^{}]+)\}/g, (_all, token: string) => {
    if (/^#+$/.test(token)) {
      counter = { width: token.length };
      return '\u0000';
    }
    return datePart(token, stamp) ?? fieldPart(token, doc, meta) ?? `{${token}}`;
  });
  if (!counter) return rendered;
  const key = rendered.split('\u0000')[0] ?? '';
  const n = await rows.nextSeriesValue(trx, key);
  return rendered.replace('\u0000', String(n).padStart(counter.width, '0'));
}

/** Two hex digits per byte value. */
const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/** Random bytes drawn in one block for many names: a crypto call per name costs more than the rest of naming. */
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;

/** Frappe's 10-character random name. */
export function hashName(): string {
  if (randomOffset + 5 > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  let name = '';
  for (let i = 0; i < 5; i++) name += HEX_PAIRS[randomPool[randomOffset + i] as number];
  randomOffset += 5;
  return name;
}

/**
 * A 32-character name that sorts by creation time: 12 hex digits of the millisecond clock, then 80 random bits (the
 * layout of a UUIDv7 without its version bits and dashes). For rows the service writes beside every write (Versions,
 * Deleted Documents, webhook deliveries): new names land at the end of the primary key's index, so a group commit
 * writes one page of it, not one random page per row (a tracked SQLite update paid more for that page than for its own
 * row).
 */
export function timeOrderedName(): string {
  return Date.now().toString(16).padStart(12, '0') + hashName() + hashName();
}

/** A UTF-16 surrogate without its pair: no UTF-8 text holds it, so a row named with it could not be addressed. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Checks and cleans a name: trimmed, non-empty, no `<` or `>`, not the DocType's own name, at most 140 characters. */
export function checkName(meta: DocTypeMeta, name: unknown): string {
  const text = typeof name === 'number' ? String(name) : typeof name === 'string' ? name.trim() : '';
  if (!text) throw new InvalidNameError(`No Name Specified for ${meta.name}`);
  if (/[<>]/.test(text)) throw new InvalidNameError("Name cannot contain special characters like '<', '>'");
  if (/[\u0000-\u001f]/.test(text)) throw new InvalidNameError('Name cannot contain control characters');
  if (LONE_SURROGATE.test(text))
    throw new InvalidNameError('Name cannot contain a lone surrogate (not valid Unicode text)');
  if (text.length > 140) throw new InvalidNameError('Name is longer than 140 characters');
  if (!meta.issingle && text === meta.name)
    throw new InvalidNameError(`${meta.name} is not allowed as a name`);
  if (text.startsWith(`New ${meta.name}`)) throw new InvalidNameError(`"${text}" is reserved`);
  return text;
}

/** The series of a document that names none: the naming_series field's first option, else its default (as Frappe). */
export function defaultNamingSeries(meta: DocTypeMeta): string | undefined {
  const field = meta.fields.find((f) => f.fieldname === 'naming_series');
  return field?.selectOptions?.find((o) => o !== '') ?? field?.default;
}

/**
 * Gives a new document its name (series numbers from `rows`, in the write transaction `trx`). `clientName` is a name
 * the client supplied and may use (v2 always; v1 only for prompt and UUID naming). `controllerAutoname` is the controller's `autoname` result.
 */
export async function makeName(
  rows: RowStore,
  trx: Knex,
  meta: DocTypeMeta,
  doc: DocData,
  clientName: string | undefined,
): Promise<string> {
  if (meta.issingle) return meta.name;
  if (clientName !== undefined) return checkName(meta, clientName);
  const rule = meta.naming;
  switch (rule.kind) {
    case 'hash':
    case 'script':
      return hashName();
    case 'autoincrement':
      return String(await rows.nextSeriesValue(trx, `autoincrement:${meta.name}`));
    case 'uuid':
      return randomUUID();
    case 'prompt':
      throw new InvalidNameError(`Please set the document name of ${meta.name}`);
    case 'field': {
      const value = doc[rule.fieldname];
      const label = meta.fields.find((f) => f.fieldname === rule.fieldname)?.label ?? rule.fieldname;
      if (value === undefined || value === null || String(value).trim() === '')
        throw new MandatoryError(`${label} is required`);
      return checkName(meta, String(value));
    }
    case 'format':
      return checkName(meta, await expandFormat(rows, trx, rule.pattern, doc, meta));
    case 'series':
      return checkName(meta, await expandSeries(rows, trx, rule.pattern, doc, meta));
    case 'naming_series': {
      const series = String(doc.naming_series ?? defaultNamingSeries(meta) ?? '');
      if (!series) throw new ValidationError('Naming Series mandatory');
      return checkName(
        meta,
        await expandSeries(rows, trx, series.includes('#') ? series : `${series}.#####`, doc, meta),
      );
    }
    default:
      return assertNever(rule);
  }
}
