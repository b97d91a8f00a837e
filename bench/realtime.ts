// Realtime under load, the line: creates (POST /api/resource/ToDo, the load worker) with no socket, then with
// RT_SOCKETS socket.io clients (default 1,000) subscribed to ToDo. Prints both rates, their ratio and the server's CPU
// per create; whether every socket received every create's list_update; and the delay from commit to receipt of every
// (socket, create) of the loaded run, p50/p99/max: receipt time minus the document's `creation` (stamped inside the
// transaction just before its commit, so a little more than commit to receipt), on one clock (loopback). Then the same
// delay for RT_PROBES single creates on an otherwise idle server. And, as a busy machine moves it least, the server's
// CPU per create for RT_FIXED creates (20 at a time) up to the last socket's receipt, with no socket and with them. The sockets live in this process (not pinned: on the
// load core they starve the load worker), so on a small machine their parsing competes with the server for CPU.
//   npx tsx bench/realtime.ts           RT_SOCKETS=1000 RT_SECONDS=5 RT_PROBES=20 RT_FIXED=200 RT_NODE_ARGS="--cpu-prof ..."
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { runLoad } from './lib/load';
import { cpuMs, detectPinning, freePort, removeOnExit, runMain, stopChild } from './lib/procs';
import { apiToken, startService } from './lib/service';

const SOCKETS = Number(process.env.RT_SOCKETS ?? 1000);
const SECONDS = Number(process.env.RT_SECONDS ?? 5);
const PROBES = Number(process.env.RT_PROBES ?? 20);
const FIXED = Number(process.env.RT_FIXED ?? 200);

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
    record: (on: boolean) => (recording = on),
    close: () => sockets.forEach((s) => s.disconnect()),
  };
}

/** Creates one ToDo; returns its name. */
async function probe(base: string, auth: string): Promise<string> {
  const res = await fetch(`${base}/api/resource/ToDo`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ description: 'probe' }),
  });
  return ((await res.json()) as { data: { name: string } }).data.name;
}

/** The `creation` (ms since epoch, from Frappe's UTC text) of every ToDo. */
async function creations(base: string, auth: string): Promise<Map<string, number>> {
  const url = `${base}/api/resource/ToDo?fields=${encodeURIComponent('["name","creation"]')}&limit_page_length=0`;
  const res = await fetch(url, { headers: { authorization: auth } });
  const rows = ((await res.json()) as { data: { name: string; creation: string }[] }).data;
  return new Map(rows.map((r) => [r.name, Date.parse(`${r.creation.replace(' ', 'T').slice(0, 23)}Z`)]));
}

/** Receipt minus creation of every receipt of these names, sorted; and how many names every socket received. */
function delays(
  received: Map<string, number[]>,
  created: Map<string, number>,
  names: Iterable<string>,
  sockets: number,
): { sorted: number[]; complete: number; names: number } {
  const out: number[] = [];
  let complete = 0;
  let count = 0;
  for (const name of names) {
    count++;
    const at = received.get(name) ?? [];
    if (at.length === sockets) complete++;
    const t0 = created.get(name) as number;
    for (const t of at) out.push(t - t0);
  }
  return { sorted: out.sort((a, b) => a - b), complete, names: count };
}

/**
 * Server CPU per create for a fixed amount of work, RT_FIXED creates 20 at a time, up to the moment every socket has
 * received every one (`delivered` counts receipts): what a busy machine hardly moves, unlike req/s.
 */
async function fixedWork(
  base: string,
  auth: string,
  pid: number,
  delivered: () => number,
  sockets: number,
): Promise<number> {
  const cpuStart = cpuMs(pid) ?? NaN;
  const target = delivered() + FIXED * sockets;
  for (let i = 0; i < FIXED; i += 20)
    await Promise.all(Array.from({ length: Math.min(20, FIXED - i) }, () => probe(base, auth)));
  for (const end = Date.now() + 60_000; delivered() < target && Date.now() < end;)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return (((cpuMs(pid) ?? NaN) - cpuStart) * 1000) / FIXED;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

const line = (label: string, d: { sorted: number[]; complete: number; names: number }, sockets: number) =>
  `${label}: ${d.complete} of ${d.names} creates reached all ${sockets} sockets; creation -> receipt over ` +
  `${d.sorted.length} receipts: p50 ${percentile(d.sorted, 50)} ms, p99 ${percentile(d.sorted, 99)} ms, ` +
  `max ${d.sorted[d.sorted.length - 1]} ms`;

async function main(): Promise<number> {
  const pinning = detectPinning();
  const port = await freePort();
  const dbFile = path.join(__dirname, 'tmp', `realtime-${process.pid}.sqlite`);
  for (const suffix of ['', '-wal', '-shm', '-migrate-lock']) removeOnExit(dbFile + suffix);
  // Every socket is the one bench user's: room for them all under max_realtime_connections_per_user.
  const siteConfig = path.join(__dirname, 'tmp', `realtime-${process.pid}.json`);
  mkdirSync(path.dirname(siteConfig), { recursive: true });
  writeFileSync(siteConfig, JSON.stringify({ max_realtime_connections_per_user: SOCKETS + 10 }));
  removeOnExit(siteConfig);
  const svc = await startService(pinning, {
    port,
    dbFile,
    timeoutMs: 120_000,
    label: 'realtime',
    extraEnv: { SITE_CONFIG: siteConfig },
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
    const fixedNone = await fixedWork(svc.base, auth, svc.pid, () => 0, 0);
    const subs = await subscribers(svc.base, auth, SOCKETS);
    const fixedSockets = await fixedWork(svc.base, auth, svc.pid, subs.count, SOCKETS);
    const before = new Set((await creations(svc.base, auth)).keys());
    subs.record(true);
    const loaded = await runLoad(pinning, spec, `${SOCKETS} sockets`, svc.pid);
    const afterLoad = await creations(svc.base, auth);
    const loadNames = [...afterLoad.keys()].filter((name) => !before.has(name));
    // Until every socket has every create (at most 30 s: a busy machine's server lags).
    for (const end = Date.now() + 30_000; Date.now() < end;) {
      if (loadNames.every((name) => (subs.received.get(name)?.length ?? 0) >= SOCKETS)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    subs.record(false);
    const underLoad = delays(subs.received, afterLoad, loadNames, SOCKETS);
    subs.received.clear();
    subs.record(true);
    const probes: string[] = [];
    for (let i = 0; i < PROBES; i++) {
      probes.push(await probe(svc.base, auth));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    subs.close();
    const idle = delays(subs.received, await creations(svc.base, auth), probes, SOCKETS);
    console.log(pinning.note);
    console.log(
      `creates, no socket:     ${Math.round(none.rps)} req/s (${none.cpuUsPerReq?.toFixed(1)} us/req)`,
    );
    console.log(
      `creates, ${SOCKETS} sockets: ${Math.round(loaded.rps)} req/s (${loaded.cpuUsPerReq?.toFixed(1)} us/req); ` +
        `ratio ${(loaded.rps / none.rps).toFixed(3)} (req/s), ` +
        `${((none.cpuUsPerReq ?? NaN) / (loaded.cpuUsPerReq ?? NaN)).toFixed(3)} (server CPU per create)`,
    );
    console.log(
      `${FIXED} creates, 20 at a time, to the last receipt: server CPU ${fixedNone.toFixed(0)} us/create with no ` +
        `socket, ${fixedSockets.toFixed(0)} with ${SOCKETS}; ratio ${(fixedNone / fixedSockets).toFixed(3)}`,
    );
    console.log(line('under load', underLoad, SOCKETS));
    console.log(line(`${PROBES} single creates`, idle, SOCKETS));
    console.log(`load average ${none.loadavg.toFixed(1)} / ${loaded.loadavg.toFixed(1)}`);
    return 0;
  } finally {
    // A graceful stop, so that a --cpu-prof profile is written.
    await stopChild(svc.child, 20_000);
  }
}

runMain(main);
