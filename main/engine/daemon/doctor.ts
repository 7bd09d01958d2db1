// `tend daemon doctor`: actionable findings, each saying what to do.
import { accessSync, constants, existsSync, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs';
import { dayBounds } from '../timing/day.js';
import { join, relative } from 'node:path';
import { readApiFile } from '../api/auth.js';
import { paths } from '../datadir.js';
import { openEntries } from '../owner-only.js';
import type { IntegrityResult } from '../store/integrity.js';
import type { Store } from '../store/store.js';
import { localComputer } from '../domain/computer.js';
import { isLiveOwner, readPidRecord } from './ownership.js';
import { heartbeatFresh, readState } from './state.js';

export type Severity = 'ok' | 'info' | 'warn' | 'error';

export interface Finding {
  id: string;
  severity: Severity;
  message: string;
  action: string | null;
}

const LOW_DISK_BYTES = 1024 ** 3;
const BIG_LOG_BYTES = 50 * 1024 ** 2;
const WORKER_SILENT_MS = 5 * 60_000;

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where to look depends on how it failed: a run that never started has no log to read. */
function errorAdvice(id: string, reason: string): string {
  if (reason.startsWith('LAUNCH_REFUSED')) return `it was refused before anything ran, for the reason above (its revision, working directory or outputs): fix that, then \`tend routine restart ${id}\``;
  if (/start command expired/.test(reason)) {
    // Runs now wait for their worker instead; an ERROR with this reason was recorded by an older Tend.
    return `no worker for ${computerOf(id)} fetched the command: ${startWorker(computerOf(id))}, check the Workers page, then \`tend routine restart ${id}\` (Tend now keeps such a run waiting for its worker; this one ended before that)`;
  }
  if (reason.startsWith('could not start') || /launch failed/.test(reason)) return `it never started: \`tend routine show ${id}\` gives its command and directory; fix them, then \`tend routine restart ${id}\``;
  return `look at \`tend logs ${id} --stream stderr\`, fix it, then \`tend routine restart ${id}\``;
}

function computerOf(routineId: string): string {
  return routineId.slice(0, routineId.indexOf(':'));
}

function startWorker(computer: string): string {
  return `start one there (tend worker --server URL --token $(tend worker token ${computer}) --computer ${computer})`;
}

/** A run waiting for its worker (offline, never connected, or it let its start command lapse) needs that worker, not a look at slots. */
function delayedAdvice(id: string, reason: string): string {
  const computer = computerOf(id);
  if (reason.includes(`worker ${computer} `)) return `it waits for the worker of ${computer} and starts once that worker is heard from: ${startWorker(computer)}, or check the Workers page`;
  return 'check its dependencies, free slots and backend health (`tend routine show`)';
}

function shellArg(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The current token, or any `#token=` address (a token since replaced may still be live elsewhere). */
function logHoldsToken(file: string, token: string | null): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  return text.includes('#token=') || (token !== null && token.length > 0 && text.includes(token));
}

/**
 * `integrity` is the result of the full check (store/integrity.ts), run by the caller off its event
 * loop; null when it was not run (no database).
 */
export function doctor(dataDir: string, store: Store | null, now: number, integrity: IntegrityResult | null = null): Finding[] {
  const out: Finding[] = [];
  const p = paths(dataDir);
  const add = (id: string, severity: Severity, message: string, action: string | null = null) => out.push({ id, severity, message, action });

  const rec = readPidRecord(dataDir);
  if (rec && !isLiveOwner(rec)) {
    // A live pid that is not the daemon that wrote the file: the pid was reused.
    const what = pidExists(rec.pid) ? 'which is now another process (the daemon that wrote it is gone)' : 'which is not running';
    add('stale-pidfile', 'warn', `daemon.pid names pid ${rec.pid}, ${what}`, 'run `tend daemon ensure`: it takes over stale ownership');
  }
  else if (!rec) add('no-daemon', 'info', 'no daemon owns the data dir: nothing is being scheduled', 'run `tend daemon ensure`, or `tend service install --start`');
  else {
    const state = readState(dataDir);
    if (!heartbeatFresh(state, now)) add('stale-heartbeat', 'error', `daemon pid ${rec.pid} is alive but its last heartbeat is ${state ? state.lastHeartbeat : 'missing'}`, 'look at daemon.log; `tend daemon restart` if it is stuck');
    if (state && state.clockJumps > 0) add('clock-jumps', 'info', `${state.clockJumps} clock jump(s) or sleep(s) seen since the daemon started; misfire policies were applied`, null);
  }

  if (!existsSync(dataDir)) add('no-data-dir', 'info', `data dir ${dataDir} does not exist yet: it is created on first use`, null);
  else try {
    accessSync(dataDir, constants.W_OK | constants.R_OK);
  } catch {
    add('data-dir-permissions', 'error', `data dir ${dataDir} is not readable and writable by this user`, `fix its ownership: chown -R $USER ${dataDir}`);
  }
  if (existsSync(p.api)) {
    const mode = statSync(p.api).mode & 0o777;
    if (mode & 0o077) add('api-token-permissions', 'error', `api.json is mode ${mode.toString(8)}: other users can read the API token`, `chmod 600 ${p.api}`);
  }
  try {
    const fs = statfsSync(dataDir);
    const free = fs.bavail * fs.bsize;
    if (free < LOW_DISK_BYTES) add('low-disk', 'warn', `only ${(free / 1024 ** 2).toFixed(0)} MiB free where the data dir is`, 'free space or move TEND_DATA_DIR; below 100 MiB the local backend pauses');
  } catch {
    /* statfs unsupported */
  }
  const state = rec && isLiveOwner(rec) ? readState(dataDir) : null;
  for (const [name, why] of Object.entries(state?.pausedBackends ?? {})) {
    add('backend-paused', 'warn', `backend ${name} is paused: ${why}`, 'its work waits (nothing fails); fix what the reason names and it resumes by itself on the next pass');
  }
  if (existsSync(dataDir)) {
    const { open, truncated } = openEntries(dataDir);
    if (open.length) {
      const shown = open.slice(0, 5).map((e) => `${relative(dataDir, e.path) || '.'} (${e.mode.toString(8)})`).join(', ');
      add('open-permissions', 'error', `${open.length}${truncated ? '+' : ''} entr${open.length === 1 ? 'y' : 'ies'} of the data dir other users may read or write: ${shown}${open.length > 5 ? ', …' : ''}`, `chmod -R go-rwx ${shellArg(dataDir)}`);
    }
  }
  const token = readApiFile(dataDir)?.token ?? null;
  const logs = existsSync(dataDir) ? readdirSync(dataDir).filter((f) => f.startsWith('daemon.log')) : [];
  const leaked: string[] = [];
  for (const f of logs) {
    const size = statSync(join(dataDir, f)).size;
    if (size > BIG_LOG_BYTES) add('oversized-log', 'warn', `${f} is ${(size / 1024 ** 2).toFixed(0)} MiB`, `remove old rotations: rm ${join(dataDir, f)}`);
    else if (logHoldsToken(join(dataDir, f), token)) leaked.push(f);
  }
  if (leaked.length) {
    add('token-in-log', 'error', `${leaked.join(', ')} hold${leaked.length === 1 ? 's' : ''} an API token (written by an older Tend): whoever read ${leaked.length === 1 ? 'it' : 'them'} can run commands as you`,
      `remove the logs and replace the token: tend daemon stop && rm ${leaked.map((f) => shellArg(join(dataDir, f))).join(' ')} ${shellArg(p.api)} && tend daemon ensure (it prints the new address)`);
  }

  if (integrity && !integrity.ok) {
    add('database-integrity', 'error', `tend.db failed its integrity check: ${integrity.problems.slice(0, 3).join('; ')}`, 'stop the daemon, copy tend.db aside, and restore it from a backup');
  }
  if (store) {
    const today = dayBounds(now).from;
    const errors = new Map<string, string>();
    const delayed = new Map<string, string>();
    // One row per routine (its latest instance), not every run of the day; the reason is that run's,
    // whose status is reported (not a statement per finding: a thousand DELAYED routines are usual
    // while a worker is away).
    for (const [id, r] of store.runs.latestPerRoutine()) {
      if (r.createdAt < today && r.endedAt !== null && r.endedAt < today) continue;
      if (r.status === 'ERROR') errors.set(id, r.reason ?? '');
      if (r.status === 'DELAYED') delayed.set(id, r.reason ?? '');
    }
    for (const [id, reason] of errors) add('routine-error', 'error', `${id} is in ERROR: ${reason}`, errorAdvice(id, reason));
    for (const [id, reason] of delayed) add('routine-delayed', 'warn', `${id} is DELAYED: ${reason}`, delayedAdvice(id, reason));
    // Jobs for a computer nobody issued a token for: no worker can ever take them.
    const orphans = store.db
      .prepare(`SELECT computer, COUNT(*) AS n FROM jobs WHERE status IN ('WAITING', 'PENDING') AND computer IS NOT NULL AND computer != ? AND computer NOT IN (SELECT computer FROM workers) GROUP BY computer`)
      .all(localComputer()) as { computer: string; n: number }[];
    for (const o of orphans) {
      add('job-no-worker', 'warn', `${o.n} batch job${o.n === 1 ? '' : 's'} posted to ${o.computer}, which has no worker token and no worker: nothing will run ${o.n === 1 ? 'it' : 'them'}`, `issue a token (tend worker token ${o.computer}) and start the worker there (tend worker --server URL --token TOKEN --computer ${o.computer} --batchjobs N), or cancel ${o.n === 1 ? 'it' : 'them'}`);
    }
    const workers = store.db.prepare(`SELECT computer, last_seen FROM workers`).all() as { computer: string; last_seen: number | null }[];
    for (const w of workers) {
      if (w.last_seen === null || now - w.last_seen > WORKER_SILENT_MS) {
        add('worker-not-seen', 'warn', `worker ${w.computer} not seen since ${w.last_seen ? new Date(w.last_seen).toISOString() : 'ever'}`, `start it: tend worker --server URL --token TOKEN --computer ${w.computer}`);
      }
    }
  }
  if (out.length === 0) add('all-good', 'ok', 'nothing to report', null);
  return out;
}
