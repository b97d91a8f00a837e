// The client's address: the socket peer, or the X-Forwarded-For hop just before the nearest trusted proxy.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { AppContext } from '../http/state';

const lists = new WeakMap<readonly string[], BlockList>();

/** Strips the IPv4-mapped IPv6 prefix (`::ffff:1.2.3.4` → `1.2.3.4`). */
export function normalizeIp(ip: string): string {
  const trimmed = ip.trim();
  return trimmed.toLowerCase().startsWith('::ffff:') && isIP(trimmed.slice(7)) === 4
    ? trimmed.slice(7)
    : trimmed;
}

/** A BlockList of addresses and CIDR ranges (invalid entries are ignored). */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.trim().split('/') as [string, string | undefined];
    const family = isIP(address);
    if (!family) continue;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else if (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))
      list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** True when `ip` is in `list`. */
export function inList(list: BlockList, ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

function trustedList(trusted: readonly string[]): BlockList {
  let list = lists.get(trusted);
  if (!list) {
    list = addressList(trusted);
    lists.set(trusted, list);
  }
  return list;
}

/**
 * The client IP of the request `req`. `X-Forwarded-For` is believed only when the socket peer is a trusted proxy
 * (`trusted`: addresses or CIDR); then the right-most hop that is not itself trusted wins.
 */
export function requestClientIp(req: IncomingMessage, trusted: readonly string[]): string {
  const peer = normalizeIp(req.socket?.remoteAddress ?? '127.0.0.1');
  let ip = peer;
  if (trusted.length && inList(trustedList(trusted), peer)) {
    const forwarded = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : String(forwarded ?? ''))
      .split(',')
      .map(normalizeIp)
      .filter((hop) => isIP(hop) !== 0);
    for (let i = hops.length - 1; i >= 0; i--) {
      ip = hops[i] as string;
      if (!inList(trustedList(trusted), ip)) break;
    }
  }
  return ip;
}

/** The request's client IP (`requestClientIp` under the site's `trusted_proxies`), worked out once per request. */
export function clientIp(ctx: AppContext): string {
  const cached = ctx.state.clientIp;
  if (cached) return cached;
  const ip = requestClientIp(ctx.req, ctx.state.site?.config.site.trusted_proxies ?? []);
  ctx.state.clientIp = ip;
  return ip;
}

/** True when the request came over https: a TLS socket, or `X-Forwarded-Proto: https` from a trusted proxy. */
export function isHttps(ctx: AppContext): boolean {
  if (ctx.secure) return true;
  const trusted = ctx.state.site?.config.site.trusted_proxies ?? [];
  const peer = normalizeIp(ctx.req.socket?.remoteAddress ?? '');
  if (!trusted.length || !inList(trustedList(trusted), peer)) return false;
  return String(ctx.get('x-forwarded-proto')).split(',')[0]?.trim().toLowerCase() === 'https';
}
