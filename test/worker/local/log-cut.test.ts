// The log cap's cut (worker/jobdir/logcap.ts): where the file system can cut the front of a file
// (fallocate --collapse-range: ext4, xfs), a write that lands between the rotator's last look and
// its cut stays in the log and the record counts every byte; where it cannot (tmpfs here, macOS),
// copy-truncate still rotates. Real files; the write is made at that moment through the rotator's hook.
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enforceLogCap, readRotation } from '../../../worker/jobdir/logcap.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const scratch = (root: string) => {
  const d = mkdtempSync(join(root, 'tend-log-cut-'));
  dirs.push(d);
  return d;
};
const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => `line ${String(from + k).padStart(8, '0')}\n`).join('');
const collapses = process.platform === 'linux' && ['/usr/bin/fallocate', '/bin/fallocate'].some((p) => existsSync(p));

describe('the log cut', () => {
  it.runIf(collapses)('keeps a write made between the last look and the cut, and counts every byte of the stream', () => {
    const dir = scratch(tmpdir()); // ext4 here
    const before = lines(1, 2000); // 28,000 bytes
    writeFileSync(join(dir, 'stdout.log'), before);
    const meanwhile = lines(2001, 2010);
    expect(enforceLogCap(dir, 'stdout', 8192, { beforeCut: () => appendFileSync(join(dir, 'stdout.log'), meanwhile) })).toBe(true);
    const rec = readRotation(dir, 'stdout')!;
    const current = readFileSync(join(dir, 'stdout.log'), 'utf8');
    const previous = readFileSync(join(dir, 'stdout.log.1'), 'utf8');
    expect(current.endsWith(meanwhile)).toBe(true);
    // Every byte written is on disk or counted as dropped: .1 ends where X.log begins.
    expect(rec.end + current.length).toBe(before.length + meanwhile.length);
    expect(rec.dropped + previous.length + current.length).toBe(before.length + meanwhile.length);
    expect(previous + current).toBe((before + meanwhile).slice(rec.dropped));
    expect(previous.length).toBeLessThanOrEqual(8192);
    expect(rec.end % 4096).toBe(0); // whole blocks were cut
    expect(readdirSync(dir).filter((n) => n.includes('tmp') || n.endsWith('.lock'))).toEqual([]);
  });

  it.runIf(existsSync('/dev/shm'))('where the file system cannot cut (tmpfs), copy-truncate keeps the newest half and says where it ends', () => {
    const dir = scratch('/dev/shm');
    const before = lines(1, 2000);
    writeFileSync(join(dir, 'stdout.log'), before);
    expect(enforceLogCap(dir, 'stdout', 8192)).toBe(true);
    const rec = readRotation(dir, 'stdout')!;
    expect(readFileSync(join(dir, 'stdout.log'), 'utf8')).toBe('');
    expect(readFileSync(join(dir, 'stdout.log.1'), 'utf8')).toBe(before.slice(-8192));
    expect(rec).toMatchObject({ gen: 1, end: before.length, kept: 8192, dropped: before.length - 8192 });
    // And the next rotation there is copy-truncate again, counted from where the last one ended.
    appendFileSync(join(dir, 'stdout.log'), lines(2001, 3000));
    expect(enforceLogCap(dir, 'stdout', 8192)).toBe(true);
    expect(readRotation(dir, 'stdout')).toMatchObject({ gen: 2, end: before.length + 14_000 });
    expect(readdirSync(dir).filter((n) => n.includes('tmp') || n.endsWith('.lock'))).toEqual([]);
  });
});
