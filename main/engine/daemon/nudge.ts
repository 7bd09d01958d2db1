// Other processes on this host (the CLI) ask the owning daemon for a pass with SIGUSR2.
// (SIGUSR1 would open Node's inspector.)
import { isLiveOwner, readPidRecord } from './ownership.js';

export function ownerPid(dataDir: string): number | null {
  const rec = readPidRecord(dataDir);
  return rec && isLiveOwner(rec) ? rec.pid : null;
}

/** True when a live owner was signalled. */
export function nudgeDaemon(dataDir: string): boolean {
  const pid = ownerPid(dataDir);
  if (pid === null || pid === process.pid) return false;
  try {
    process.kill(pid, 'SIGUSR2');
    return true;
  } catch {
    return false;
  }
}
