// A webhook URL checked before anything is sent: http(s) only, no credentials in it, and every address its host
// resolves to allowed by the address policy. The caller connects to the address returned, never resolving again.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ValidationError } from '../errors/errors';
import { mayConnect, type AllowedHosts } from './address-policy';

/** Resolves a host name to its addresses (the system resolver by default; a test's resolver answers in-process). */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address in the order given. */
export const systemLookup: HostLookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** A URL that passed: where to connect (the address checked) and what to ask for. */
export interface VettedUrl {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** Parses `raw` as a webhook URL: absolute http(s), a host, no user name or password. Throws ValidationError. */
export function parseWebhookUrl(raw: unknown): URL {
  const text = typeof raw === 'string' ? raw.trim() : '';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`Request URL ${text.slice(0, 200)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError('Request URL must be http or https');
  if (!url.hostname) throw new ValidationError('Request URL has no host');
  if (url.username || url.password)
    throw new ValidationError('Request URL may not carry a user name or password');
  return url;
}

/**
 * Checks that `raw` may be sent to: throws ValidationError naming the refused address when its host is (or resolves
 * to) an address the policy refuses, or cannot be resolved. Returns the first address, to connect to.
 */
export async function vetUrl(raw: unknown, allowed: AllowedHosts, lookup: HostLookup): Promise<VettedUrl> {
  const url = parseWebhookUrl(raw);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host);
    } catch {
      throw new ValidationError(`Request URL host ${host.slice(0, 200)} cannot be resolved`);
    }
    if (!addresses.length) throw new ValidationError(`Request URL host ${host.slice(0, 200)} has no address`);
  }
  for (const { address } of addresses)
    if (!mayConnect(allowed, host, address))
      throw new ValidationError(
        `Request URL host ${host.slice(0, 200)} is ${address}: a loopback, private, link-local or reserved address (allow it in webhook_allowed_hosts)`,
      );
  const first = addresses[0] as { address: string; family: number };
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
