// Files Tend writes are the owner's alone: 0700 directories, 0600 files. The API token runs
// commands as this user, tend.db holds routines' secret arguments, job logs echo them: whoever
// can read the data dir can act as its owner.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/** Any permission for the group or others. */
const OPEN_BITS = 0o077;

/** mkdir -p: what it creates is 0700 (an existing directory is left as it is). */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}

/** Drop the group's and others' bits of an existing file or directory; true if it changed. */
export function tighten(path: string): boolean {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  if (st.isSymbolicLink() || (st.mode & OPEN_BITS) === 0) return false;
  try {
    chmodSync(path, st.mode & 0o7700);
    return true;
  } catch {
    return false; // not ours to change: doctor names it
  }
}

/** Create `path` empty (0600) unless it exists, then make sure it is owner-only. */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', FILE_MODE));
  tighten(path);
}

/**
 * At start, an existing data dir made looser (by an older Tend, or by hand) is tightened: the
 * directory, every file at its top, `runs/` and its day directories. Job directories inside are
 * not walked (there may be thousands): closed day directories put them out of other users' reach,
 * and `doctor` names any left open. Returns what was changed.
 */
export function tightenDataDir(dataDir: string): string[] {
  makePrivateDir(dataDir);
  const changed: string[] = [];
  const visit = (p: string) => {
    if (tighten(p)) changed.push(p);
  };
  visit(dataDir);
  for (const name of safeList(dataDir)) visit(join(dataDir, name));
  const runs = join(dataDir, 'runs');
  for (const day of safeList(runs)) visit(join(runs, day));
  return changed;
}

export interface OpenEntry {
  path: string;
  mode: number;
}

/**
 * Entries of `root` (itself included) that the group or others may read, write or enter, walked
 * depth-first up to `limit` entries looked at; `truncated` when the walk stopped early. A
 * directory nobody else may enter is not walked: what is inside is out of their reach whatever
 * its modes (and doctor, which the Health page calls on the daemon, stays cheap: a data dir kept
 * owner-only costs one look, not one per job file).
 */
export function openEntries(root: string, limit = 100_000): { open: OpenEntry[]; truncated: boolean } {
  const open: OpenEntry[] = [];
  let seen = 0;
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    if (++seen > limit) return { open, truncated: true };
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) continue;
    if (st.mode & OPEN_BITS) open.push({ path: p, mode: st.mode & 0o777 });
    if (st.isDirectory() && (st.mode & 0o011) !== 0) for (const name of safeList(p)) stack.push(join(p, name));
  }
  return { open, truncated: false };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
