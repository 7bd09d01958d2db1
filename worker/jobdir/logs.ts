// Captured streams. Each stream is kept as two files: `X.log` (the routine appends to it) and
// `X.log.1` (the newest `half` bytes before it), rotated by whoever polls (logcap.ts), so the
// newest output (at least half the cap of it, once that much was written) is always kept.
// Readers here only ever read tails and new bytes, in bounded chunks, never a whole log.
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isSameProcessAlive } from './proc.js';
import { jobPath, readPidRecord, readSentinel } from './jobdir.js';
import { enforceLogCap, readRotation, rotationInProgress } from './logcap.js';

export type Stream = 'stdout' | 'stderr';

export const DEFAULT_LOG_CAP_BYTES = 64 * 1024 * 1024;
/** Smaller caps would make the wrapper rotate absurdly often. */
export const MIN_LOG_CAP_BYTES = 4096;

/** The rotation size the wrapper uses for a cap (each of the two files holds at most this). */
export function halfCap(logCapBytes: number): number {
  const cap = Number.isFinite(logCapBytes) && logCapBytes > 0 ? logCapBytes : DEFAULT_LOG_CAP_BYTES;
  return Math.floor(Math.max(cap, MIN_LOG_CAP_BYTES) / 2);
}

export function logPaths(runDir: string, stream: Stream): { current: string; previous: string } {
  const current = join(runDir, `${stream}.log`);
  return { current, previous: `${current}.1` };
}

const CHUNK = 64 * 1024;

function tryOpen(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}

function readRange(fd: number, start: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** Drop bytes of a UTF-8 character cut by the start of a tail. */
function skipContinuationBytes(buf: Buffer): Buffer {
  let i = 0;
  while (i < buf.length && i < 4 && ((buf[i] as number) & 0xc0) === 0x80) i++;
  return buf.subarray(i);
}

/** The last `want` bytes of `prev` + the first `curSize` bytes of `cur`. */
function readTail(cur: number | null, curSize: number, prev: number | null, want: number): Buffer {
  const parts: Buffer[] = [];
  let need = want;
  if (cur !== null) {
    const take = Math.min(curSize, need);
    parts.push(readRange(cur, curSize - take, take));
    need -= take;
  }
  if (prev !== null && need > 0) {
    const size = fstatSync(prev).size;
    const take = Math.min(size, need);
    parts.unshift(readRange(prev, size - take, take));
  }
  const all = Buffer.concat(parts);
  return all.length >= want ? skipContinuationBytes(all) : all;
}

function openBoth(runDir: string, stream: Stream): { cur: number | null; prev: number | null } {
  const { current, previous } = logPaths(runDir, stream);
  return { cur: tryOpen(current), prev: tryOpen(previous) };
}

function closeBoth(p: { cur: number | null; prev: number | null }): void {
  if (p.cur !== null) closeSync(p.cur);
  if (p.prev !== null) closeSync(p.prev);
}

/** The newest `maxBytes` bytes of a stream (across the rotation), as text. */
export function tailLog(runDir: string, stream: Stream, maxBytes: number): string {
  const want = Math.max(0, Math.floor(maxBytes));
  // A rotation between reading `.1` and `X.log` would show a seam; look again until none ran.
  let text = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const gen = readRotation(runDir, stream)?.gen ?? 0;
    const pair = openBoth(runDir, stream);
    try {
      const curSize = pair.cur === null ? 0 : fstatSync(pair.cur).size;
      const onDisk = curSize + (pair.prev === null ? 0 : fstatSync(pair.prev).size);
      const bytes = readTail(pair.cur, curSize, pair.prev, want);
      // A tail that reaches back to the oldest byte the cap kept says that earlier output was dropped.
      const dropped = readRotation(runDir, stream)?.dropped ?? 0;
      text = (dropped > 0 && want >= onDisk ? droppedNote(dropped).slice(1) : '') + bytes.toString('utf8');
    } finally {
      closeBoth(pair);
    }
    if (!rotationInProgress(runDir, stream) && (readRotation(runDir, stream)?.gen ?? 0) === gen) break;
  }
  return text;
}

const halfCaps = new Map<string, number>();

/** The rotation size of a job's streams, from its manifest (remembered: it never changes). */
function halfCapOf(runDir: string): number | null {
  const known = halfCaps.get(runDir);
  if (known !== undefined) return known;
  // Any backend's manifest (local, Slurm) names the cap.
  let cap: unknown;
  try {
    cap = (JSON.parse(readFileSync(jobPath(runDir, 'manifest'), 'utf8')) as { logCapBytes?: unknown }).logCapBytes;
  } catch {
    return null;
  }
  if (typeof cap !== 'number') return null;
  if (halfCaps.size > 10_000) halfCaps.clear();
  const half = halfCap(cap);
  halfCaps.set(runDir, half);
  return half;
}

/**
 * Enforce the cap of both streams of a job (cheap: a stat each while they are small). Called by
 * poll for running jobs and by fetch once at the end; `done` forgets the job's cached cap.
 */
export function capLogs(runDir: string, done = false): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    const size = statSync(logPaths(runDir, stream).current, { throwIfNoEntry: false })?.size;
    if (size === undefined || size < MIN_LOG_CAP_BYTES / 2) continue;
    const half = halfCapOf(runDir);
    if (half !== null) enforceLogCap(runDir, stream, half);
  }
  if (done) halfCaps.delete(runDir);
}

/** Total bytes of a stream currently kept on disk (both files). */
export function logBytesOnDisk(runDir: string, stream: Stream): number {
  const { current, previous } = logPaths(runDir, stream);
  let total = 0;
  for (const p of [current, previous]) {
    try {
      total += statSync(p).size;
    } catch {
      // absent
    }
  }
  return total;
}

export interface FollowOptions {
  /** Newest bytes already written to yield first (default 64 KiB; 0 = only new output). */
  tailBytes?: number;
  /** Applied to that tail before it is yielded (e.g. keep its last N lines). */
  tailFilter?: (text: string) => string;
  /** How often to look for new output (default 200 ms). */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** The job is over and its wrapper is gone (or has been lingering long after the sentinel). */
function jobFinished(runDir: string): boolean {
  const sentinel = readSentinel(runDir);
  const rec = readPidRecord(runDir);
  if (!sentinel) {
    if (!rec) return false; // not started yet
    return !isSameProcessAlive(rec.wrapperPid, rec.wrapperStartTime) && !isSameProcessAlive(rec.pid, rec.startTime) && !readSentinel(runDir);
  }
  if (!rec || !isSameProcessAlive(rec.wrapperPid, rec.wrapperStartTime)) return true;
  return Date.now() - sentinel.at > 2000;
}

/** What a follower shows where the cap dropped output it had not read yet. */
export function droppedNote(bytes: number | null): string {
  return bytes === null ? '\n[tend: output dropped by the log cap]\n' : `\n[tend: ${bytes} bytes dropped by the log cap]\n`;
}

/**
 * Yield a stream's text as it is written, starting with its newest `tailBytes`, until the job is
 * over and everything it wrote has been read (or `signal` aborts). A follower is a poller too: it
 * keeps the cap (logcap.ts). Positions are stream offsets (bytes since the job began): after a
 * rotation the follower reads the part of `.1` it had not seen (the rotation record says where
 * `.1` lies in the stream), then `X.log` from the first byte it has not read; output the cap dropped before it was read
 * is marked with `droppedNote`.
 */
export async function* followLog(runDir: string, stream: Stream, opts: FollowOptions = {}): AsyncGenerator<string> {
  const intervalMs = opts.intervalMs ?? 200;
  const decoder = new TextDecoder('utf-8');
  const { current, previous } = logPaths(runDir, stream);
  const half = halfCapOf(runDir);
  const rotationNow = () => readRotation(runDir, stream);

  // The starting point: a tail read while no rotation ran. `base` is the stream offset of
  // X.log's first byte, `pos` how much of X.log has been read.
  let gen = 0;
  let base = 0;
  let pos = 0;
  let tail: Buffer = Buffer.alloc(0);
  for (let attempt = 0; attempt < 5; attempt++) {
    const rec = rotationNow();
    gen = rec?.gen ?? 0;
    base = rec?.end ?? 0;
    const pair = openBoth(runDir, stream);
    try {
      pos = pair.cur === null ? 0 : fstatSync(pair.cur).size;
      tail = readTail(pair.cur, pos, pair.prev, Math.max(0, Math.floor(opts.tailBytes ?? CHUNK)));
    } finally {
      closeBoth(pair);
    }
    if (!rotationInProgress(runDir, stream) && (rotationNow()?.gen ?? 0) === gen) break;
  }
  const decode = (buf: Buffer) => decoder.decode(buf, { stream: true });

  /** After rotations: the unread part of `.1` ('' if none ran), or null to look again later. */
  const catchUp = (): string | null => {
    const rec = rotationNow();
    if (!rec || rec.gen === gen) return '';
    const prev = tryOpen(previous);
    if (prev === null) return null;
    try {
      if (fstatSync(prev).ino !== rec.ino) return null; // a newer rotation is being recorded
      const at = base + pos;
      const from = Math.max(0, at - rec.dropped);
      const note = at < rec.dropped ? droppedNote(rec.dropped - at) : '';
      const text = note + decode(readRange(prev, from, Math.max(0, rec.kept - from)));
      gen = rec.gen;
      base = rec.end;
      // A collapse (logcap.ts) leaves the bytes past its block boundary at the start of X.log:
      // those this follower had read already are skipped, not read again.
      pos = Math.max(0, at - rec.end);
      return text;
    } finally {
      closeSync(prev);
    }
  };

  let fd: number | null = null;
  try {
    if (tail.length > 0) {
      const text = decode(tail);
      const shown = opts.tailFilter ? opts.tailFilter(text) : text;
      if (shown) yield shown;
    }
    for (;;) {
      if (opts.signal?.aborted) return;
      const finished = jobFinished(runDir);
      if (half !== null) enforceLogCap(runDir, stream, half);
      const caught = rotationInProgress(runDir, stream) ? null : catchUp();
      if (caught) yield caught;
      if (caught !== null) {
        if (fd === null) fd = tryOpen(current);
        if (fd !== null && inodeOf(current) !== null && inodeOf(current) !== fstatSync(fd).ino) {
          closeSync(fd); // replaced (a wrapper of an older Tend renamed it away): read the new one
          fd = tryOpen(current);
          pos = 0;
        }
        // Read what is there; keep it only if no rotation began meanwhile (it may hold bytes of
        // the next generation): discarded bytes are read again, from `.1` or X.log, next round.
        const fresh: Buffer[] = [];
        let got = 0;
        while (fd !== null && got < 16 * CHUNK) {
          const buf = readRange(fd, pos + got, CHUNK);
          if (buf.length === 0) break;
          fresh.push(buf);
          got += buf.length;
        }
        if (got > 0 && !rotationInProgress(runDir, stream) && (rotationNow()?.gen ?? 0) === gen) {
          pos += got;
          const text = decode(Buffer.concat(fresh));
          if (text) yield text;
          if (finished || got >= 16 * CHUNK) continue; // drain to the end before leaving
        }
        if (finished && got === 0) {
          const rest = decoder.decode();
          if (rest) yield rest;
          return;
        }
      }
      if (opts.signal?.aborted) return;
      try {
        await delay(intervalMs, undefined, opts.signal ? { signal: opts.signal } : undefined);
      } catch {
        return; // aborted
      }
    }
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function inodeOf(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}
