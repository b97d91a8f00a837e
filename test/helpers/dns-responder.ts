// A DNS server on a loopback UDP port answering A and AAAA questions from a table (anything else: NXDOMAIN), and a
// lookup through it: tests resolve names to private addresses without sending anything to them.
import { createSocket, type Socket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Reads the question name and type of a DNS query. */
function question(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at]) {
    const len = msg[at] as number;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += len + 1;
  }
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

/** The 16 bytes of an IPv6 address. */
function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const parse = (p: string | undefined) => (p ? p.split(':').map((g) => parseInt(g, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  const groups = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** The answer to `msg` from `table` (name → addresses). */
function answer(msg: Buffer, table: Record<string, string[]>): Buffer {
  const q = question(msg);
  const wanted = q.type === 1 ? 4 : q.type === 28 ? 6 : 0;
  const known = table[q.name];
  const addresses = (known ?? []).filter((a) => isIP(a) === wanted);
  const header = Buffer.alloc(12);
  msg.copy(header, 0, 0, 2);
  header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const data = wanted === 4 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(q.type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(1, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, msg.subarray(12, q.end), ...records]);
}

/** A running responder: its lookup function and how to stop it. */
export interface DnsResponder {
  lookup(host: string): Promise<{ address: string; family: number }[]>;
  close(): Promise<void>;
}

/**
 * Starts a responder on a free port of 127.0.0.1 answering from `table` (a fixed port could be held by any UDP socket:
 * resolvers pick their source ports in the same range).
 */
export async function startDnsResponder(table: Record<string, string[]>): Promise<DnsResponder> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, peer) => socket.send(answer(msg, table), peer.port, peer.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    lookup: async (host) => {
      const v4 = await resolver.resolve4(host).catch(() => [] as string[]);
      const v6 = await resolver.resolve6(host).catch(() => [] as string[]);
      const all = [
        ...v4.map((address) => ({ address, family: 4 })),
        ...v6.map((address) => ({ address, family: 6 })),
      ];
      if (!all.length) throw new Error(`${host} not found`);
      return all;
    },
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
