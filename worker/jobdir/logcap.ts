// Keeping a job's captured streams within their cap. The routine writes straight into `X.log`
// (opened for appending), so no process sits between it and the file; whoever polls the job (the
// daemon's pass, a follower, fetch) enforces the cap: once `X.log` reaches half the cap, its newest
// half-cap bytes are copied to `X.log.1` (replacing the previous one), the copied part leaves
// `X.log`, and `X.log.rot` records the rotation: which `.1` it made (inode), where in the stream
// `.1` ends, how much of the stream is no longer on disk. Disk use per stream is at most the cap
// plus what the routine writes between two polls; the newest half-cap bytes are always kept.
//
// Where the file system can (Linux's fallocate --collapse-range: ext4, xfs) the copied part is cut
// from the front of `X.log` in one call, whole blocks up to the copy's end: what the routine writes
// meanwhile stays in the file, so nothing is lost that the record does not count. Elsewhere
// (macOS, tmpfs, btrfs; a cut shorter than a block) it is copy-truncate, which leaves one window:
// bytes written between the rotator's last look at the size and its truncate (two system calls
// apart; what arrived during the copy is copied too) are lost, and not counted. A lock file keeps
// two pollers from rotating the same stream at once; readers skip a look while it is held.
import { spawnSync } from 'node:child_process';
import { accessSync, closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { logPaths, type Stream } from './logs.js';
import { writeFileAtomic } from './jobdir.js';

export interface RotationRecord {
  /** Rotations so far; a reader that saw generation g and now sees g + 2 missed one. */
  gen: number;
  /** Inode of the `.1` this rotation wrote. */
  ino: number;
  /** Stream offset (bytes since the job began) at which `.1` ends = where `X.log` begins. */
  end: number;
  /** Bytes in `.1`. */
  kept: number;
  /** Stream bytes no longer on disk: everything before `.1`. */
  dropped: number;
}

/** A lock older than this was left by a poller that died mid-rotation. */
const STALE_LOCK_MS = 30_000;
const CHUNK = 1 << 20;
/** A routine writing faster than we copy gets this many catch-ups before the truncate. */
const MAX_CATCH_UPS = 64;

export function rotationPaths(runDir: string, stream: Stream): { record: string; lock: string } {
  const { current } = logPaths(runDir, stream);
  return { record: `${current}.rot`, lock: `${current}.lock` };
}

export function readRotation(runDir: string, stream: Stream): RotationRecord | null {
  try {
    const v = JSON.parse(readFileSync(rotationPaths(runDir, stream).record, 'utf8')) as RotationRecord;
    return typeof v.gen === 'number' && typeof v.end === 'number' ? v : null;
  } catch {
    return null;
  }
}

export function rotationInProgress(runDir: string, stream: Stream): boolean {
  try {
    return Date.now() - statSync(rotationPaths(runDir, stream).lock).mtimeMs < STALE_LOCK_MS;
  } catch {
    return false;
  }
}

function takeLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      try {
        if (Date.now() - statSync(lock).mtimeMs < STALE_LOCK_MS) return false;
        unlinkSync(lock);
      } catch {
        // gone meanwhile: try again
      }
    }
  }
  return false;
}

/** Append bytes [from, to) of `src` to the open file `out`. */
function copyRange(src: number, out: number, from: number, to: number): void {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, to - from)));
  let pos = from;
  while (pos < to) {
    const n = readSync(src, buf, 0, Math.min(buf.length, to - pos), pos);
    if (n === 0) break;
    writeSync(out, buf, 0, n);
    pos += n;
  }
}

/** util-linux `fallocate` (Linux only), found once; null where there is none. */
let fallocateBin: string | null | undefined;
function fallocate(): string | null {
  if (fallocateBin !== undefined) return fallocateBin;
  fallocateBin = null;
  if (process.platform !== 'linux') return null;
  for (const path of ['/usr/bin/fallocate', '/bin/fallocate', '/usr/sbin/fallocate', '/sbin/fallocate']) {
    try {
      accessSync(path, constants.X_OK);
      return (fallocateBin = path);
    } catch {
      // keep looking
    }
  }
  return null;
}

/** File systems (by device) that refused a collapse: copy-truncate there, without asking again. */
const noCollapse = new Set<number>();

/** Cut bytes [0, len) from the front of `path`; false when this file system (or machine) cannot. */
function collapseFront(path: string, dev: number, len: number): boolean {
  const bin = fallocate();
  if (!bin || noCollapse.has(dev)) return false;
  const r = spawnSync(bin, ['--collapse-range', '--offset', '0', '--length', String(len), path], { stdio: 'ignore', timeout: 10_000 });
  if (r.status === 0) return true;
  noCollapse.add(dev);
  return false;
}

/** For tests: called between the rotator's last look at `X.log` and its cut. */
export interface RotationHooks {
  beforeCut?: () => void;
}

/**
 * Rotate `X.log` if it has reached `half` bytes. Returns whether it did (false also when another
 * poller holds the lock: it is rotating the stream right now).
 */
export function enforceLogCap(runDir: string, stream: Stream, half: number, hooks: RotationHooks = {}): boolean {
  const { current, previous } = logPaths(runDir, stream);
  try {
    if (statSync(current).size < half) return false;
  } catch {
    return false;
  }
  const { record, lock } = rotationPaths(runDir, stream);
  if (!takeLock(lock)) return false;
  let fd: number | null = null;
  const tmp = `${previous}.${process.pid}.tmp`;
  const trimmed = `${tmp}.trim`;
  try {
    fd = openSync(current, 'r+');
    const st = fstatSync(fd);
    let size = st.size;
    if (size < half) return false;
    let copied: number;
    // A collapse cuts whole blocks and must leave at least one byte: up to the last block boundary
    // before the end. What lies past it (and whatever the routine writes meanwhile) stays in X.log.
    const blk = st.blksize > 0 ? st.blksize : 4096;
    const cut = Math.floor((size - 1) / blk) * blk;
    let out = openSync(tmp, 'w', 0o600);
    try {
      let collapsed = false;
      if (cut > 0 && cut >= half && fallocate() && !noCollapse.has(st.dev)) {
        copyRange(fd, out, cut - Math.min(cut, half), cut);
        hooks.beforeCut?.();
        collapsed = collapseFront(current, st.dev, cut);
        if (collapsed) size = cut;
        else {
          // Refused: start the copy again, copy-truncate style (a new file: no hole at its old end).
          closeSync(out);
          out = openSync(tmp, 'w', 0o600);
        }
      }
      if (!collapsed) {
        // Copy the newest half, then whatever the routine wrote meanwhile, until a look at the size
        // finds nothing new: only bytes written between that look and the truncate are lost.
        copyRange(fd, out, size - Math.min(size, half), size);
        for (let i = 0; i < MAX_CATCH_UPS; i++) {
          const now = fstatSync(fd).size;
          if (now <= size) break;
          copyRange(fd, out, size, now);
          size = now;
        }
        hooks.beforeCut?.();
        ftruncateSync(fd, 0);
      }
      copied = fstatSync(out).size;
    } finally {
      closeSync(out);
    }
    // Keep the newest `half` of what was copied (the cut is done: no hurry now).
    if (copied > half) {
      const src = openSync(tmp, 'r');
      out = openSync(trimmed, 'w', 0o600);
      try {
        copyRange(src, out, copied - half, copied);
      } finally {
        closeSync(src);
        closeSync(out);
      }
      renameSync(trimmed, tmp);
      copied = half;
    }
    const ino = statSync(tmp).ino;
    const last = readRotation(runDir, stream);
    const begin = last?.end ?? 0;
    renameSync(tmp, previous);
    const rec: RotationRecord = { gen: (last?.gen ?? 0) + 1, ino, end: begin + size, kept: copied, dropped: begin + size - copied };
    writeFileAtomic(record, `${JSON.stringify(rec)}\n`, 0o600);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
    for (const leftover of [tmp, trimmed]) {
      try {
        unlinkSync(leftover);
      } catch {
        // renamed into place
      }
    }
    try {
      unlinkSync(lock);
    } catch {
      // already gone
    }
  }
}
