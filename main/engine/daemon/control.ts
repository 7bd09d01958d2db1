// ensure / stop / restart: start a detached daemon when none owns the data dir and return once it
// answers; stop it and wait until it has exited.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { openAddress, readApiFile } from '../api/auth.js';
import { paths } from '../datadir.js';
import { TendError } from '../errors.js';
import { makePrivateDir } from '../owner-only.js';
import { nodeChildEnv, nodeExecPath } from '../node-runtime.js';
import { isLiveOwner, readPidRecord } from './ownership.js';
import { heartbeatFresh, readState } from './state.js';

export interface EnsureResult {
  pid: number;
  started: boolean;
  url: string | null;
  /** The address with the token (`URL/#token=…`), for the terminal that asked; null without an API. */
  open: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(fn: () => T | null | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new TendError('UNAVAILABLE', `timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

function answering(dataDir: string, pid: number): boolean {
  const st = readState(dataDir);
  return !!st && st.pid === pid && heartbeatFresh(st, Date.now()) && st.lastPass !== null;
}

/** Idempotent: a second call with a healthy daemon changes nothing. */
export async function ensureDaemon(dataDir: string, entry: string, timeoutMs = 20_000): Promise<EnsureResult> {
  const rec = readPidRecord(dataDir);
  if (rec && isLiveOwner(rec)) {
    await waitFor(() => answering(dataDir, rec.pid), timeoutMs, `daemon ${rec.pid} to answer`);
    return result(dataDir, rec.pid, false);
  }
  makePrivateDir(dataDir);
  const out = openSync(paths(dataDir).log, 'a', 0o600);
  const logFrom = fstatSync(out).size;
  const child = spawn(nodeExecPath(), [entry, 'daemon', 'run', '--quiet'], {
    detached: true,
    stdio: ['ignore', out, out],
    env: nodeChildEnv({ ...process.env, TEND_DATA_DIR: dataDir }),
  });
  child.unref();
  const pid = child.pid!;
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? 1));
  await waitFor(
    () => {
      if (exited !== null) {
        // Lost the race to another daemon: that one is the owner now.
        const owner = readPidRecord(dataDir);
        if (owner && owner.pid !== pid && isLiveOwner(owner)) return true;
        throw new TendError('UNAVAILABLE', `the daemon exited at start (code ${exited}): ${startFailure(dataDir, logFrom) ?? `see ${paths(dataDir).log}`}`);
      }
      return answering(dataDir, pid);
    },
    timeoutMs,
    'the new daemon to answer',
  );
  const owner = readPidRecord(dataDir)!;
  return result(dataDir, owner.pid, owner.pid === pid);
}

/** What the daemon said before it gave up (a bad setting names itself), from what it added to daemon.log. */
function startFailure(dataDir: string, from: number): string | null {
  let text: string;
  try {
    const fd = openSync(paths(dataDir).log, 'r');
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(64 * 1024, Math.max(0, size - from)));
      readSync(fd, buf, 0, buf.length, from);
      text = buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const said = text.split('\n').map((l) => /tend daemon: (.*)$/.exec(l)?.[1]).filter((m): m is string => !!m);
  return said.length ? said.join('; ') : null;
}

function result(dataDir: string, pid: number, started: boolean): EnsureResult {
  const url = readState(dataDir)?.api?.url ?? null;
  const api = url ? readApiFile(dataDir) : null;
  return { pid, started, url, open: url && api ? openAddress(url, api.token) : null };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Signal the owner and wait until it has exited. Returns the pid stopped, or null if none ran. */
export async function stopDaemon(dataDir: string, timeoutMs = 20_000): Promise<number | null> {
  const rec = readPidRecord(dataDir);
  if (!rec || !isLiveOwner(rec)) return null;
  process.kill(rec.pid, 'SIGTERM');
  await waitFor(() => !alive(rec.pid), timeoutMs, `daemon ${rec.pid} to exit`);
  return rec.pid;
}
