// The programs a job's waiter needs, found on this process's PATH (or the standard
// directories), not on the job's: a routine's own PATH must not decide whether its waiter starts.
// Their absolute paths are written into run.sh, so the waiter looks nothing up.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { TendError } from '../../main/engine/errors.js';
import { processProvider } from '../jobdir/proc.js';
import { wrapperScript } from './wrapper.js';

const found = new Map<string, string | null>();

export function findTool(name: string): string | null {
  const known = found.get(name);
  if (known !== undefined) return known;
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin'];
  let hit: string | null = null;
  for (const dir of dirs) {
    if (!isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      hit = join(dir, name);
      break;
    } catch {
      // keep looking
    }
  }
  found.set(name, hit);
  return hit;
}

/** How this host starts waiters: given by its host (the settings' TEND_JOB_SHELL, TEND_SPAWNER). */
export interface WaiterTools {
  /** The shell that runs waiters, as a command line ("dash", "/bin/bash --posix"); default sh. */
  shell?: string | null;
  /** perl's POSIX::setsid even where util-linux setsid is installed (tests: the macOS path). */
  perlSetsid?: boolean;
  /** Start wrappers from the spawn helper (default); off: from this process. */
  spawner?: boolean;
  /** The perl batch waiters run in (tests: one that cannot start); default: perl on PATH. */
  perl?: string;
}

/**
 * The shell that runs waiters: POSIX sh, unless `shell` (TEND_JOB_SHELL, e.g. "/bin/bash --posix")
 * picks another, so the same tests run the waiter under dash and under bash in POSIX mode (macOS's /bin/sh).
 */
export function jobShell(shell?: string | null): string[] {
  const forced = shell?.trim();
  if (forced) {
    const argv = forced.split(/\s+/);
    const bin = argv[0] as string;
    const path = isAbsolute(bin) ? bin : findTool(bin);
    if (!path) throw new TendError('INVALID', `TEND_JOB_SHELL: ${bin} not found`);
    return [path, ...argv.slice(1)];
  }
  const sh = findTool('sh');
  if (!sh) throw new TendError('UNAVAILABLE', 'cannot start the job wrapper: sh not found');
  return [sh];
}

/**
 * argv that runs the rest of a command line as the leader of a new session: util-linux setsid
 * (Linux), else perl's POSIX::setsid (macOS ships perl, not setsid). Null if neither is there.
 */
export function setsidArgv(perlSetsid = false): string[] | null {
  const setsid = perlSetsid ? null : findTool('setsid');
  if (setsid) return [setsid, '--'];
  const perl = findTool('perl');
  if (perl) return [perl, '-MPOSIX', '-e', 'POSIX::setsid(); exec { $ARGV[0] } @ARGV or die "$ARGV[0]: $!\\n"', '--'];
  return null;
}

/** Why waiters cannot run here, or null. */
export function missingTools(t: WaiterTools = {}): string | null {
  try {
    jobShell(t.shell);
  } catch (err) {
    return (err as Error).message;
  }
  if (!setsidArgv(t.perlSetsid)) return 'programs the job wrapper needs are missing: setsid (util-linux) or perl';
  if (processProvider().name === 'ps' && !findTool('ps')) return 'programs the job wrapper needs are missing: ps';
  return null;
}

/** run.sh for a job on this machine, its places written in. */
export function localWrapperScript(runDir: string, cwd: string, t: WaiterTools = {}, leftoverGraceMs?: number): string {
  return wrapperScript({ runDir, cwd, provider: processProvider().name, setsid: neededSetsid(t), leftoverGraceMs });
}

/** run.sh as every local job of this process shares it: it finds its places when it runs (WrapperParams). */
export function sharedWrapperScript(t: WaiterTools = {}, leftoverGraceMs?: number): string {
  return wrapperScript({ provider: processProvider().name, setsid: neededSetsid(t), leftoverGraceMs });
}

function neededSetsid(t: WaiterTools): string[] {
  const setsid = setsidArgv(t.perlSetsid);
  if (!setsid) throw new TendError('UNAVAILABLE', 'cannot start the job wrapper: neither setsid nor perl found');
  return setsid;
}
