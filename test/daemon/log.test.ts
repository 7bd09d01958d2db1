// daemon.log rotates by size: daemon.log → .1 → .2 → .3, the oldest dropped; no file outgrows the cap.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RotatingLog } from '../../main/engine/daemon/log.js';
import { scratch } from '../helpers/cli.js';

let box: ReturnType<typeof scratch>;
beforeEach(() => (box = scratch('tend-log-')));
afterEach(() => box.remove());

const lineNo = (text: string) => text.split('\n').filter(Boolean).map((l) => Number(/ line (\d+)$/.exec(l)![1]));

it('keeps daemon.log and three rotations, each under the cap, newest lines in daemon.log, in order', () => {
  const file = join(box.dir, 'daemon.log');
  const log = new RotatingLog(file, 2000, 3);
  for (let i = 0; i < 1000; i++) log.write(`line ${i}`);
  expect(readdirSync(box.dir).sort()).toEqual(['daemon.log', 'daemon.log.1', 'daemon.log.2', 'daemon.log.3']);
  const files = ['daemon.log.3', 'daemon.log.2', 'daemon.log.1', 'daemon.log'].map((f) => join(box.dir, f));
  for (const f of files) expect(statSync(f).size).toBeLessThanOrEqual(2000);
  // Oldest to newest, the kept lines are one contiguous, ordered tail ending at the last line.
  const kept = files.flatMap((f) => lineNo(readFileSync(f, 'utf8')));
  expect(kept.at(-1)).toBe(999);
  expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => kept[0]! + k));
  expect(kept.length).toBeGreaterThan(60);
  expect(kept[0]).toBeGreaterThan(0);
});

it('counts what is already in daemon.log when it starts (a restarted daemon rotates on time)', () => {
  const file = join(box.dir, 'daemon.log');
  writeFileSync(file, 'x'.repeat(1990) + '\n');
  new RotatingLog(file, 2000, 3).write('line 1');
  expect(existsSync(`${file}.1`)).toBe(true);
  expect(readFileSync(`${file}.1`, 'utf8')).toBe('x'.repeat(1990) + '\n');
  expect(lineNo(readFileSync(file, 'utf8'))).toEqual([1]);
});

it('multi-byte text counts in bytes, not characters', () => {
  const file = join(box.dir, 'daemon.log');
  const log = new RotatingLog(file, 1000, 2);
  for (let i = 0; i < 200; i++) log.write(`ünïcödé ✓✓✓ line ${i}`);
  for (const f of ['daemon.log', 'daemon.log.1', 'daemon.log.2']) expect(statSync(join(box.dir, f)).size).toBeLessThanOrEqual(1000);
  expect(existsSync(`${file}.3`)).toBe(false);
});
