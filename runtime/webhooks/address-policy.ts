// Where a webhook may send: never to a loopback, private, link-local, shared, multicast or reserved address (the
// cloud metadata endpoints 169.254.169.254 and fd00:ec2::254 among them), in IPv4 or IPv6 (an IPv4 address mapped,
// translated or 6to4-embedded into IPv6 counts as the IPv4 address), unless site config `webhook_allowed_hosts` names
// the URL's host or a CIDR range holding the address. The check runs on the addresses a name resolves to, and the
// request then connects to the address that passed (send-request.ts), so a name cannot resolve to another address in
// between.
import { BlockList, isIP } from 'node:net';
import { addressList, inList, normalizeIp } from '../auth/client-ip';

/** Ranges no webhook reaches unless allowed (RFC 6890's special-purpose registries, the ones that are not global). */
const REFUSED = addressList([
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  // NAT64's local-use prefix (RFC 8215): translated by the site's own network, so never a public receiver.
  '64:ff9b:1::/48',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
]);

/** IPv6 ranges whose last 32 bits are an IPv4 address: mapped, SIIT's translated (RFC 6145), NAT64, compatible. */
const TAIL_IPV4 = new BlockList();
TAIL_IPV4.addSubnet('::ffff:0:0', 96, 'ipv6');
TAIL_IPV4.addSubnet('::ffff:0:0:0', 96, 'ipv6');
TAIL_IPV4.addSubnet('64:ff9b::', 96, 'ipv6');
TAIL_IPV4.addSubnet('::', 96, 'ipv6');
/** 6to4 (RFC 3056): the IPv4 address is in bits 16-47. */
const SIX_TO_FOUR = new BlockList();
SIX_TO_FOUR.addSubnet('2002::', 16, 'ipv6');

/** The IPv4 address an IPv6 address carries (see TAIL_IPV4 and SIX_TO_FOUR), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const at = TAIL_IPV4.check(lower, 'ipv6') ? 6 : SIX_TO_FOUR.check(lower, 'ipv6') ? 1 : undefined;
  if (at === undefined) return undefined;
  const groups = expandIpv6(lower);
  const high = groups[at] ?? 0;
  const low = groups[at + 1] ?? 0;
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail read as two groups). */
function expandIpv6(address: string): number[] {
  let text = address.replace(/^\[|\]$/g, '').split('%')[0] as string;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = (dotted[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -(dotted[1] as string).length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - front.length - back.length).fill(0);
  return [...front, ...zeros, ...back];
}

/** True when `address` (an IP literal) is in a refused range. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined && inList(REFUSED, v4)) return true;
  }
  return inList(REFUSED, address);
}

/** The allowed hosts of a site: host names (lower case) and a list of addresses and CIDR ranges. */
export interface AllowedHosts {
  names: ReadonlySet<string>;
  addresses: BlockList;
}

/** Reads site config `webhook_allowed_hosts` (host names, addresses, CIDR ranges); anything else is ignored. */
export function allowedHosts(entries: unknown): AllowedHosts {
  const list = Array.isArray(entries) ? entries.filter((e): e is string => typeof e === 'string') : [];
  const ranges = list.map((e) => e.trim().replace(/^\[(.*)\]$/, '$1'));
  return {
    names: new Set(ranges.filter((e) => isIP(e.split('/')[0] as string) === 0).map((e) => e.toLowerCase())),
    addresses: addressList(ranges),
  };
}

/** True when a request to `host` (the URL's host name) at `address` may go: a public address, or an allowed one. */
export function mayConnect(allowed: AllowedHosts, host: string, address: string): boolean {
  if (allowed.names.has(host.toLowerCase().replace(/^\[(.*)\]$/, '$1'))) return true;
  if (inList(allowed.addresses, address) || inList(allowed.addresses, normalizeIp(address))) return true;
  return !isRefusedAddress(address);
}
