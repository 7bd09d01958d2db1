// Captured output: capped per stream keeping the newest bytes, read by tail, followed live.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalBackend, halfCap, logBytesOnDisk, type LocalBackend } from '../../../worker/local/index.js';
import { suiteTools } from '../../helpers/waiter-tools.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;

beforeAll(() => {
  data = tempDir();
  backend = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools });
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

const LINE = 14; // "line 00000001\n"
const lineNo = (l: string) => Number(l.slice(5));

/** Numbered lines must follow each other without gaps or repeats. */
function expectConsecutive(lines: string[]): void {
  for (let i = 1; i < lines.length; i++) expect(lineNo(lines[i] as string), `after ${lines[i - 1]}`).toBe(lineNo(lines[i - 1] as string) + 1);
}

describe('output cap', () => {
  it('a flood past the cap keeps the newest bytes and stays within the cap on disk', async () => {
    const cap = 64 * 1024;
    const lines = 100_000; // 1.4 MB, over 20 times the cap
    const spec = makeSpec(data.path, { command: fixture('flood.sh'), args: [String(lines)], logCapBytes: cap });
    expect(await settle(backend, await backend.submit(spec), 30_000)).toMatchObject({ exitCode: 0, reason: null });

    const onDisk = logBytesOnDisk(spec.runDir, 'stdout');
    expect(onDisk).toBeLessThanOrEqual(cap);
    expect(onDisk).toBeGreaterThanOrEqual(halfCap(cap));
    expect(statSync(join(spec.runDir, 'stdout.log.1')).size).toBe(halfCap(cap));

    const tail = backend.tailLog(spec.runDir, 'stdout', cap);
    // Reaching back past what the cap kept, the tail says where earlier output was dropped.
    const note = /^\[tend: (\d+) bytes dropped by the log cap\]\n/.exec(tail);
    expect(note, tail.slice(0, 80)).not.toBeNull();
    expect(Number(note![1])).toBeGreaterThan(lines * LINE - cap);
    expect(Number(note![1])).toBeLessThanOrEqual(lines * LINE - onDisk + 4);
    const kept = tail.slice(note![0].length);
    expect(Buffer.byteLength(kept)).toBe(onDisk);
    // A tail within what was kept has no note.
    expect(backend.tailLog(spec.runDir, 'stdout', 100)).toMatch(/^line \d+\nEND\n$|^\d+\nEND\n$|END\n$/);
    expect(backend.tailLog(spec.runDir, 'stdout', 100)).not.toContain('[tend:');
    const keptLines = kept.split('\n').filter((l) => l !== '');
    expect(keptLines.at(-1)).toBe('END');
    const numbered = keptLines.slice(1, -1); // the first one may be cut by the rotation
    expect(numbered.at(-1)).toBe(`line ${String(lines).padStart(8, '0')}`);
    expectConsecutive(numbered);
    expect(lineNo(numbered[0] as string)).toBeGreaterThan(lines - Math.ceil(cap / LINE)); // old output is gone
  });

  it('tailLog reads only the newest bytes asked for, across the rotation boundary', async () => {
    const cap = 8192;
    const spec = makeSpec(data.path, { command: fixture('flood.sh'), args: ['2000'], logCapBytes: cap });
    await settle(backend, await backend.submit(spec));
    const current = statSync(join(spec.runDir, 'stdout.log')).size;
    const tail = backend.tailLog(spec.runDir, 'stdout', current + 3 * LINE);
    expect(Buffer.byteLength(tail)).toBe(current + 3 * LINE);
    expect(tail.endsWith('line 00002000\nEND\n')).toBe(true);
    expectConsecutive(tail.split('\n').filter((l) => l.startsWith('line')));
    expect(backend.tailLog(spec.runDir, 'stdout', 4)).toBe('END\n');
    expect(backend.tailLog(spec.runDir, 'stderr', 100)).toBe('');
    expect(backend.tailLog(join(data.path, 'nowhere'), 'stdout', 100)).toBe('');
  });

  it('a tiny cap is raised to a workable minimum rather than rotating every byte', () => {
    expect(halfCap(10)).toBe(2048);
    expect(halfCap(0)).toBe(32 * 1024 * 1024);
  });
});

describe('followLog', () => {
  it('yields output as it is written and ends when the job does', async () => {
    const release = join(data.path, 'follow.release');
    const spec = makeSpec(data.path, {
      command: '/bin/sh',
      args: ['-c', 'echo one; while [ ! -e "$1" ]; do sleep 0.02; done; echo two', 'sh', release],
    });
    const handle = await backend.submit(spec);
    let text = '';
    const done = (async () => {
      for await (const chunk of backend.followLog(spec.runDir, 'stdout', { intervalMs: 20 })) text += chunk;
    })();
    await waitFor(() => text.includes('one\n'), 10_000, '"one" to be followed');
    expect(text).toBe('one\n'); // "two" has not been written yet
    writeFileSync(release, '');
    await done;
    expect(text).toBe('one\ntwo\n');
    expect((await backend.poll([handle]))[0]?.state).toBe('done');
  });

  it('follows through rotations without losing or repeating anything', async () => {
    // Lockstep: the routine writes 200 lines (2800 bytes, less than the 4096-byte rotation size),
    // then waits until the follower has seen them, ten times over: every rotation happens while
    // followLog is looking, so all 2000 lines must come through exactly once and in order.
    const release = join(data.path, 'rotate.release');
    const script = `i=1; while [ $i -le 10 ]; do seq -f 'line %08g' $(( (i - 1) * 200 + 1 )) $(( i * 200 )); while [ ! -e "$1.$i" ]; do sleep 0.01; done; i=$((i + 1)); done; echo END`;
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', script, 'sh', release], logCapBytes: 8192 });
    await backend.submit(spec);
    let text = '';
    const done = (async () => {
      for await (const chunk of backend.followLog(spec.runDir, 'stdout', { intervalMs: 10, tailBytes: 1 << 20 })) text += chunk;
    })();
    for (let i = 1; i <= 10; i++) {
      await waitFor(() => text.includes(`line ${String(i * 200).padStart(8, '0')}\n`), 10_000, `line ${i * 200}`);
      writeFileSync(`${release}.${i}`, '');
    }
    await done;
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines.at(-1)).toBe('END');
    expect(lines.slice(0, -1).map(lineNo)).toEqual(Array.from({ length: 2000 }, (_, k) => k + 1));
    expect(existsSync(join(spec.runDir, 'stdout.log.1'))).toBe(true);
  });

  it('after a rotation that keeps bytes it had read already (a collapse at a block boundary), reads on from where it was', async () => {
    // 400 lines (5,600 bytes) are written before the follower starts, so its tail has read them
    // all; then its first look rotates: a collapse cuts the first 4,096 bytes and leaves the
    // rest, already read, at the start of X.log. Nothing of it may come again.
    const release = join(data.path, 'reread.release');
    const script = `seq -f 'line %08g' 1 400; while [ ! -e "$1" ]; do sleep 0.01; done; seq -f 'line %08g' 401 500; echo END`;
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', script, 'sh', release], logCapBytes: 8192 });
    await backend.submit(spec);
    const log = join(spec.runDir, 'stdout.log');
    await waitFor(() => existsSync(log) && statSync(log).size === 400 * LINE, 10_000, 'the first 400 lines');
    let text = '';
    const done = (async () => {
      for await (const chunk of backend.followLog(spec.runDir, 'stdout', { intervalMs: 10, tailBytes: 1 << 20 })) text += chunk;
    })();
    await waitFor(() => existsSync(join(spec.runDir, 'stdout.log.1')), 10_000, 'a rotation');
    writeFileSync(release, '');
    await done;
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines.at(-1)).toBe('END');
    expect(lines.slice(0, -1).map(lineNo)).toEqual(Array.from({ length: 500 }, (_, k) => k + 1));
  });

  it('stops when aborted', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    const ac = new AbortController();
    let text = '';
    const done = (async () => {
      for await (const chunk of backend.followLog(spec.runDir, 'stdout', { intervalMs: 20, signal: ac.signal })) text += chunk;
    })();
    await waitFor(() => text.includes('hanging'), 10_000, 'output');
    ac.abort();
    await done;
    await backend.cancel(handle, 1000);
  });
});
