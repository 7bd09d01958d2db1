// main/engine/lazy-crypto.ts: random bytes without node:crypto until something needs the module
// itself, and node:crypto's own once it is loaded. Run in a Node of its own: this one has long
// loaded node:crypto.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { assertBuilt, REPO } from '../helpers/cli.js';

const PROBE = `
const m = await import(process.argv[1]);
const loaded = () => process.moduleLoadList.includes('NativeModule crypto');
const first = m.randomBytes(32), second = m.randomBytes(3);
const before = loaded();
const hash = m.nodeCrypto().createHash('sha256').update('x').digest('hex');
const after = m.randomBytes(16);
process.stdout.write(JSON.stringify({ first: first.toString('hex'), second: second.length, before, hash, after: after.length, loaded: loaded() }));
`;

it('randomBytes gives strong random bytes without loading node:crypto, which loads with its first use', () => {
  assertBuilt();
  const url = pathToFileURL(join(REPO, 'dist', 'main', 'engine', 'lazy-crypto.js')).href;
  const runs = [0, 1].map(() => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE, url], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as { first: string; second: number; before: boolean; hash: string; after: number; loaded: boolean };
  });
  for (const r of runs) {
    expect(r.first).toMatch(/^[0-9a-f]{64}$/);
    expect(r.second).toBe(3);
    expect(r.before).toBe(false);
    expect(r.hash).toBe('2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881');
    expect(r.after).toBe(16);
    expect(r.loaded).toBe(true);
  }
  expect(runs[0]!.first).not.toBe(runs[1]!.first);
});
