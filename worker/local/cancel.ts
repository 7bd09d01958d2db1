// Stopping a local job: TERM to every process of the routine's session (its process group and
// any group a grandchild moved to), KILL to whatever is left after the grace period, then wait
// until /proc shows none of them and the exit-code sentinel exists. Processes that started a
// session of their own (setsid, daemonising) have left the job and are out of reach.
import { setTimeout as delay } from 'node:timers/promises';
import { TendError } from '../../main/engine/errors.js';
import { isSameProcessAlive, sessionMembers } from '../jobdir/proc.js';
import { readCancelRecord, readSentinel, writeCancelRecord, writeSentinelIfAbsent } from '../jobdir/jobdir.js';
import { completeHandle, sameBoot, type LocalHandle } from './handle.js';

const POLL_MS = 25;
/** After KILL, how long processes may take to disappear (D state, a loaded machine). */
const KILL_DEADLINE_MS = 10_000;
/** How long the wrapper gets to write the sentinel once the routine is gone. */
const SENTINEL_DEADLINE_MS = 5_000;
/** How long to wait for a just-launched wrapper to record the routine's pid. */
const START_DEADLINE_MS = 5_000;

type Sig = 'TERM' | 'KILL';

function send(pid: number, sig: Sig): boolean {
  try {
    process.kill(pid, `SIG${sig}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Signal the session's main group and every member outside it. With `already`, each process is
 * signalled once (a second TERM means "hurry" to some programs); later calls reach only members
 * that appeared since.
 */
function signalSession(h: LocalHandle, sig: Sig, already: Set<string> | null): number {
  if (h.pid === null) return 0;
  const members = sessionMembers(h.pid, h.startTime);
  let sent = 0;
  const fresh = members.filter((m) => !already?.has(`${m.pid}:${m.startTime}`));
  if (fresh.some((m) => m.pgid === h.pid) && send(-h.pid, sig)) {
    for (const m of members) if (m.pgid === h.pid) already?.add(`${m.pid}:${m.startTime}`);
    sent++;
  }
  for (const m of fresh) {
    const key = `${m.pid}:${m.startTime}`;
    if (already?.has(key)) continue;
    already?.add(key);
    if (send(m.pid, sig)) sent++;
  }
  // Just after fork the routine may not have called setsid yet: alive, but not a member.
  const leaderKey = `${h.pid}:${h.startTime}`;
  if (members.length === 0 && !already?.has(leaderKey) && isSameProcessAlive(h.pid, h.startTime) && send(h.pid, sig)) {
    already?.add(leaderKey);
    sent++;
  }
  return sent;
}

function gone(h: LocalHandle): boolean {
  if (h.pid === null) return true;
  return sessionMembers(h.pid, h.startTime).length === 0 && !isSameProcessAlive(h.pid, h.startTime);
}

async function until(cond: () => boolean, deadline: number): Promise<boolean> {
  for (;;) {
    if (cond()) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

export async function cancelLocalJob(handle: LocalHandle, graceMs: number): Promise<void> {
  const runDir = handle.runDir;
  if (readSentinel(runDir)) return;
  let h = completeHandle(handle);
  if (!sameBoot(h)) return; // nothing of it survived the reboot; fetch reports it vanished
  const wrapperAlive = () => isSameProcessAlive(h.wrapperPid, h.wrapperStartTime);

  if (h.pid === null) {
    // Launched moments ago: give the wrapper the time to record the routine.
    await until(() => {
      h = completeHandle(h);
      return h.pid !== null || readSentinel(runDir) !== null || !wrapperAlive();
    }, Date.now() + START_DEADLINE_MS);
    if (readSentinel(runDir)) return;
    if (h.pid === null) {
      if (h.wrapperPid !== null && wrapperAlive()) {
        // Stuck before starting the routine: the wrapper's own session is the job.
        send(-h.wrapperPid, 'KILL');
        await until(() => !wrapperAlive(), Date.now() + KILL_DEADLINE_MS);
        writeSentinelIfAbsent(runDir, { kind: 'signal', signal: 'KILL' });
      }
      return;
    }
  }

  if (gone(h)) {
    // Already over: the wrapper is writing the sentinel, or the job vanished (fetch says so).
    await until(() => readSentinel(runDir) !== null || !wrapperAlive(), Date.now() + SENTINEL_DEADLINE_MS);
    return;
  }
  writeCancelRecord(runDir, { requestedAt: Date.now(), graceMs, signal: 'TERM' });
  const signalled = new Set<string>();
  signalSession(h, 'TERM', signalled);

  let last: Sig = 'TERM';
  const graceDeadline = Date.now() + Math.max(0, graceMs);
  // Members that appear during the grace period (a fork in flight) get their TERM too.
  const stoppedByTerm = await until(() => {
    signalSession(h, 'TERM', signalled);
    return gone(h);
  }, graceDeadline);
  if (!stoppedByTerm) {
    last = 'KILL';
    writeCancelRecord(runDir, { ...(readCancelRecord(runDir) ?? { requestedAt: Date.now(), graceMs }), signal: 'KILL' });
    const killed = await until(() => {
      signalSession(h, 'KILL', null);
      return gone(h);
    }, Date.now() + KILL_DEADLINE_MS);
    if (!killed) throw new TendError('UNAVAILABLE', `job ${h.runId || runDir} did not stop within ${KILL_DEADLINE_MS} ms of SIGKILL`);
  }

  // The wrapper records how the routine ended; if the wrapper itself is gone, say it here.
  await until(() => readSentinel(runDir) !== null || !wrapperAlive(), Date.now() + SENTINEL_DEADLINE_MS);
  writeSentinelIfAbsent(runDir, { kind: 'signal', signal: last });
}
