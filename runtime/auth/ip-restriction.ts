// User `restrict_ip`: comma-separated address prefixes (as Frappe) or CIDR ranges the user may connect from.
import { isIP } from 'node:net';
import { addressList, inList } from './client-ip';
import type { BlockList } from 'node:net';

interface Rule {
  /** Full addresses and CIDR ranges. */
  list: BlockList;
  /** Partial addresses matched as text prefixes (`192.168.`), as Frappe does. */
  prefixes: string[];
}

const MAX_RULES = 1_000;
const parsed = new Map<string, Rule>();

function parse(restriction: string): Rule {
  let rule = parsed.get(restriction);
  if (rule) return rule;
  const entries = restriction
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter(Boolean);
  const exact = entries.filter((e) => e.includes('/') || isIP(e) !== 0);
  rule = { list: addressList(exact), prefixes: entries.filter((e) => !exact.includes(e)) };
  if (parsed.size >= MAX_RULES) parsed.clear();
  parsed.set(restriction, rule);
  return rule;
}

/** True when `ip` may be used by a user whose `restrict_ip` is `restriction` (empty: any address). */
export function ipAllowed(restriction: string | undefined, ip: string): boolean {
  if (!restriction || !restriction.trim()) return true;
  const rule = parse(restriction);
  return inList(rule.list, ip) || rule.prefixes.some((prefix) => ip.startsWith(prefix));
}
