// Data fields whose `options` name a kind of value (Email, Phone, URL, Name) are checked as Frappe's
// BaseDocument._validate_data_fields checks them, with frappe.utils' rules: validate_email_address (each address of
// a comma-separated list), validate_phone_number, validate_url and validate_name (a person's name). Empty values pass.
import {
  InvalidEmailAddressError,
  InvalidNameError,
  InvalidPhoneNumberError,
  ValidationError,
} from '../errors/errors';
import type { FieldMeta } from '../meta/types';
import type { DocData } from '../db/row-store';

/** Users whose name stands in an Email field of their own documents (Frappe's STANDARD_USERS). */
const STANDARD_USERS: ReadonlySet<unknown> = new Set(['Guest', 'Administrator']);

/** frappe.utils' EMAIL_MATCH_PATTERN, matched (as Python's `re.match`) at the start of the address only. */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?/i;
/** frappe.utils' PHONE_NUMBER_PATTERN: 1 to 20 digits, spaces and `+_-,.*#()`. */
const PHONE = /^[0-9 +_\-,.*#()]{1,20}$/;
/** frappe.utils' PERSON_NAME_PATTERN (Python's Unicode `\w`: letters, numbers, `_`): words of `\w'-`, one space apart. */
const PERSON_NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_'-]*( [\p{L}\p{N}_][\p{L}\p{N}_'-]*)*$/u;
/** A URL scheme as Python's urlsplit reads one: an ASCII letter, then letters, digits, `+`, `-`, `.`. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes a value echoed in a message (Frappe escapes the address it refuses; clients may show messages as HTML). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** frappe.utils.split_emails: tabs and line breaks are spaces; split on commas outside double quotes; trimmed. */
function splitEmails(text: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  const spaced = text.replace(/[\t\n\r]/g, ' ');
  for (let i = 0; i <= spaced.length; i++) {
    const c = spaced[i];
    if (c === '"') quoted = !quoted;
    else if (i === spaced.length || (c === ',' && !quoted)) {
      const part = spaced.slice(start, i).trim();
      if (part) out.push(part);
      start = i + 1;
    }
  }
  return out;
}

/** The address of `Name <address>`, or the text itself (email.utils.parseaddr, for the shapes a field holds). */
function addressOf(text: string): string {
  const angle = /<([^<>]*)>/.exec(text);
  return angle ? (angle[1] as string).trim() : text;
}

/** frappe.utils.validate_email_address(text, throw=True): each comma-separated address must match. */
function checkEmail(text: string): void {
  for (const part of text.trim().split(',')) {
    const e = part.trim();
    // Frappe lets these through without a word.
    if (!e || e.includes('undisclosed-recipient')) continue;
    const valid = !(e.includes(' ') && !e.includes('<')) && EMAIL.test(addressOf(e));
    if (!valid) throw new InvalidEmailAddressError(`${escapeHtml(e)} is not a valid Email Address`);
  }
}

/** frappe.utils.validate_url: a scheme with a host or a path (Python's urlsplit), or a path from the root. */
export function isFrappeUrl(text: string): boolean {
  if (text.startsWith('/')) return true;
  // urlsplit drops leading C0 controls and spaces, and every tab and line break.
  let rest = text.replace(/^[\x00-\x20]+/, '').replace(/[\t\r\n]/g, '');
  const colon = rest.indexOf(':');
  if (colon <= 0 || !SCHEME.test(rest.slice(0, colon))) return false;
  rest = rest.slice(colon + 1);
  let host = '';
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    host = end < 0 ? rest.slice(2) : rest.slice(2, end + 2);
    rest = end < 0 ? '' : rest.slice(end + 2);
  }
  const path = rest.split(/[?#]/, 1)[0] ?? '';
  return host !== '' || path !== '';
}

/** Checks one value of a Data field by its options; `owner` is the document's owner (for STANDARD_USERS in Email). */
function checkValue(field: FieldMeta, value: string, owner: unknown): void {
  switch (field.options) {
    case 'Email':
      if (STANDARD_USERS.has(owner) && STANDARD_USERS.has(value)) return;
      for (const address of splitEmails(value)) checkEmail(address);
      return;
    case 'Phone':
      if (!PHONE.test(value.trim()))
        throw new InvalidPhoneNumberError(`${escapeHtml(value.trim())} is not a valid Phone Number`);
      return;
    case 'URL':
      if (!isFrappeUrl(value)) throw new ValidationError(`'${escapeHtml(value)}' is not a valid URL`);
      return;
    case 'Name':
      if (!PERSON_NAME.test(value.trim()))
        throw new InvalidNameError(`${escapeHtml(value.trim())} is not a valid Name`);
      return;
    default:
      return;
  }
}

/** Checks the Data fields of one document or child row (`fields`: its fields with a validated option). */
export function checkDataOptions(fields: readonly FieldMeta[], data: DocData, owner: unknown): void {
  for (const field of fields) {
    const value = data[field.fieldname];
    if (typeof value === 'string' && value !== '') checkValue(field, value, owner);
  }
}
