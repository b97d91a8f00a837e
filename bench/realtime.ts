// Realtime under load: creates (POST /api/resource/ToDo, autocannon) with no socket, then with RT_SOCKETS socket.io
// clients (default 1,000) subscribed to ToDo. Prints both rates and their ratio, how many list_update messages the
// sockets received against how many they should have (every socket, every create), and the delay from sending a probe
// create to each socket's receipt of its event (p50/p99: an upper bound of commit→receipt, as the probe's own request
// is in it). The sockets live in this process, so on a small machine their parsing competes with the server for CPU.
//   npx tsx bench/realtime.ts           RT_SOCKETS=1000 RT_SECONDS=5 RT_PROBES=20
import path from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { runLoad } from './lib/load';
import { detectPinning, freePort, removeOnExit, runMain, stopChild } from './lib/procs';
import { apiToken, startService } from './lib/service';

const SOCKETS = Number(process.env.RT_SOCKETS ?? 1000);
const SECONDS = Number(process.env.RT_SECONDS ?? 5);
const PROBES = Number(process.env.RT_PROBES ?? 20);

/** Connects `n` sockets subscribed to ToDo; each counts its list_update messages and notes when each name arrived. */
async function subscribers(base: string, auth: string, n: number) {
  const received = new Map<string, number[]>();
  let count = 0;
  let recording = false;
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, async () => {
      const socket = io(base, {
        transports: ['websocket'],
        extraHeaders: { Authorization: auth },
        reconnection: false,
      });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      socket.on('list_update', (e: { name: string }) => {
        count++;
        if (!recording) return;
        const at = received.get(e.name);
        if (at) at.push(Date.now());
        else received.set(e.name, [Date.now()]);
      });
      const ack = (await socket.emitWithAck('doctype_subscribe', 'ToDo')) as { ok: boolean };
      if (!ack.ok) throw new Error('subscribe refused');
    });
    await Promise.all(batch);
  }
  return {
    received,
    count: () => count,
    record: () => (recording = true),
    close: () => sockets.forEach((s) => s.disconnect()),
  };
}

/** Creates one ToDo; returns its name and when the request was sent. */
async function probe(base: string, auth: string): Promise<{ name: string; sent: number }> {
  const sent = Date.now();
  const res = await fetch(`${base}/api/resource/ToDo`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ description: 'probe' }),
  });
  const body = (await res.json()) as { data: { name: string } };
  return { name: body.data.name, sent };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function main(): Promise<number> {
  const pinning = detectPinning();
  const port = await freePort();
  const dbFile = path.join(__dirname, 'tmp', `realtime-${process.pid}.sqlite`);
  for (const suffix of ['', '-wal', '-shm', '-migrate-lock']) removeOnExit(dbFile + suffix);
  const svc = await startService(pinning, {
    port,
    dbFile,
    timeoutMs: 120_000,
    label: 'realtime',
    // RT_NODE_ARGS: node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    nodeArgs: process.env.RT_NODE_ARGS ? process.env.RT_NODE_ARGS.split(/\s+/) : [],
  });
  try {
    const auth = await apiToken(svc.base);
    const spec = {
      url: `${svc.base}/api/resource/ToDo`,
      method: 'POST' as const,
      body: JSON.stringify({ description: 'x' }),
      headers: { authorization: auth, 'content-type': 'application/json' },
      connections: 20,
      seconds: SECONDS,
      warmupSeconds: 1,
    };
    const none = await runLoad(pinning, spec, 'no sockets', svc.pid);
    const subs = await subscribers(svc.base, auth, SOCKETS);
    const countTodos = async () =>
      (
        (await (
          await fetch(`${svc.base}/api/v2/doctype/ToDo/count`, { headers: { authorization: auth } })
        ).json()) as { data: number }
      ).data;
    const todosBefore = await countTodos();
    const before = subs.count();
    const loaded = await runLoad(pinning, spec, `${SOCKETS} sockets`, svc.pid);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const delivered = subs.count() - before;
    const created = (await countTodos()) - todosBefore;
    subs.record();
    const probes: { name: string; sent: number }[] = [];
    for (let i = 0; i < PROBES; i++) {
      probes.push(await probe(svc.base, auth));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    subs.close();
    const delays: number[] = [];
    for (const { name, sent } of probes)
      for (const at of subs.received.get(name) ?? []) delays.push(at - sent);
    delays.sort((a, b) => a - b);
    console.log(
      `creates, no socket:     ${Math.round(none.rps)} req/s (${none.cpuUsPerReq?.toFixed(1)} us/req)`,
    );
    console.log(
      `creates, ${SOCKETS} sockets: ${Math.round(loaded.rps)} req/s (${loaded.cpuUsPerReq?.toFixed(1)} us/req); ratio ${(loaded.rps / none.rps).toFixed(3)}`,
    );
    console.log(
      `list_update received for the loaded run: ${delivered} of ${created * SOCKETS} (${created} creates x ${SOCKETS} sockets)`,
    );
    console.log(
      `probe send -> receipt over ${delays.length} receipts (${PROBES} probes x ${SOCKETS} sockets): p50 ${percentile(delays, 50)} ms, p99 ${percentile(delays, 99)} ms, max ${delays[delays.length - 1]} ms`,
    );
    return 0;
  } finally {
    // A graceful stop, so that a --cpu-prof profile is written.
    await stopChild(svc.child, 20_000);
  }
}

runMain(main);
