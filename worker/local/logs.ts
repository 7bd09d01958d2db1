// Captured streams. The wrapper keeps each stream as two files: `X.log` (being written) and
// `X.log.1` (the previous `half` bytes). When `X.log` reaches half the cap it is renamed over
// `X.log.1` and a new `X.log` begins, so disk use per stream stays at or below the cap and the
// newest output (at least half the cap of it, once that much was written) is always kept.
// Readers here only ever read tails and new bytes, in bounded chunks, never a whole log.
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isSameProcessAlive } from './proc.js';
import { readPidRecord, readSentinel } from './jobdir.js';

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

/**
 * Open the two files of a stream consistently: if a rotation happens between the two opens, the
 * same inode is seen twice and the pair is taken again.
 */
function openPair(runDir: string, stream: Stream): { cur: number | null; prev: number | null } {
  const { current, previous } = logPaths(runDir, stream);
  for (let attempt = 0; attempt < 3; attempt++) {
    const cur = tryOpen(current);
    const prev = tryOpen(previous);
    if (cur === null || prev === null || fstatSync(cur).ino !== fstatSync(prev).ino) return { cur, prev };
    closeSync(cur);
    closeSync(prev);
  }
  return { cur: null, prev: tryOpen(previous) };
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

/** The newest `maxBytes` bytes of a stream (across the rotation), as text. */
export function tailLog(runDir: string, stream: Stream, maxBytes: number): string {
  const want = Math.max(0, Math.floor(maxBytes));
  const { cur, prev } = openPair(runDir, stream);
  try {
    return readTail(cur, cur === null ? 0 : fstatSync(cur).size, prev, want).toString('utf8');
  } finally {
    if (cur !== null) closeSync(cur);
    if (prev !== null) closeSync(prev);
  }
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

/**
 * Yield a stream's text as it is written, starting with its newest `tailBytes`, until the job is
 * over and everything it wrote has been read (or `signal` aborts). Follows the rotation: the old
 * file is read to its end before the new one is started.
 */
export async function* followLog(runDir: string, stream: Stream, opts: FollowOptions = {}): AsyncGenerator<string> {
  const intervalMs = opts.intervalMs ?? 200;
  const decoder = new TextDecoder('utf-8');
  const { current, previous } = logPaths(runDir, stream);
  const pair = openPair(runDir, stream);
  let fd = pair.cur;
  let pos = fd === null ? 0 : fstatSync(fd).size;
  const tail = readTail(fd, pos, pair.prev, Math.max(0, Math.floor(opts.tailBytes ?? CHUNK)));
  if (pair.prev !== null) closeSync(pair.prev);

  try {
    if (tail.length > 0) {
      const text = decoder.decode(tail, { stream: true });
      const shown = opts.tailFilter ? opts.tailFilter(text) : text;
      if (shown) yield shown;
    }
    for (;;) {
      if (opts.signal?.aborted) return;
      const finished = jobFinished(runDir);
      if (fd === null) {
        fd = tryOpen(current);
        pos = 0;
      }
      // Drain the open file, then switch if it was rotated away.
      while (fd !== null) {
        for (;;) {
          const buf = readRange(fd, pos, CHUNK);
          if (buf.length === 0) break;
          pos += buf.length;
          const text = decoder.decode(buf, { stream: true });
          if (text) yield text;
          if (opts.signal?.aborted) return;
        }
        let rotated = false;
        try {
          rotated = statSync(current).ino !== fstatSync(fd).ino;
        } catch {
          rotated = false; // between rename and re-creation: look again next round
        }
        if (!rotated) break;
        const readIno = fstatSync(fd).ino;
        closeSync(fd);
        pos = 0;
        // Rotated twice since the last look: `.log.1` is a file not read yet; read it whole first.
        // (Rotated three times or more: the output between is no longer on disk.)
        fd = tryOpen(previous);
        if (fd !== null && fstatSync(fd).ino !== readIno) continue;
        if (fd !== null) closeSync(fd);
        fd = tryOpen(current);
      }
      if (finished) {
        const rest = decoder.decode();
        if (rest) yield rest;
        return;
      }
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
