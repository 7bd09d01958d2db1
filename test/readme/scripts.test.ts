// Every `npm …` script a README line names exists and works from a fresh checkout (no dist/):
// the headless way in (`npm run daemon`) must build before it runs what it built.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, killTracked, REPO, scratch, track } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** `npm run X`, `npm start`, `npm test` as the README writes them. */
function namedScripts(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/\bnpm (?:run ([\w:-]+)|(start|test)\b)/g)) names.add(m[1] ?? m[2]!);
  return [...names];
}

const fresh = scratch('tend-fresh-');
afterAll(async () => {
  await killTracked();
  fresh.remove();
});

describe('the README’s npm scripts', () => {
  it('every script the README names is defined', () => {
    const named = namedScripts(readme);
    expect(named).toEqual(expect.arrayContaining(['start', 'test', 'daemon', 'build']));
    for (const n of named) expect(scripts[n], `npm run ${n}`).toBeTypeOf('string');
  });

  it('a script that runs dist/ builds it first', () => {
    for (const n of namedScripts(readme)) {
      const s = scripts[n]!;
      if (!/\bdist\//.test(s)) continue;
      const builds = s.indexOf('npm run build') !== -1 && s.indexOf('npm run build') < s.indexOf('dist/');
      expect(builds || scripts[`pre${n}`]?.includes('npm run build'), `npm run ${n}: ${s}`).toBeTruthy();
    }
  });

  it('npm run daemon starts a daemon on a fresh checkout without dist/', async () => {
    // The tracked files as they are in this tree, with the installed node_modules beside them.
    const repo = join(fresh.dir, 'repo');
    const files = spawnSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
    for (const f of files) {
      if (!existsSync(join(REPO, f))) continue;
      mkdirSync(join(repo, f, '..'), { recursive: true });
      cpSync(join(REPO, f), join(repo, f));
    }
    symlinkSync(join(REPO, 'node_modules'), join(repo, 'node_modules'));
    expect(existsSync(join(repo, 'dist'))).toBe(false);
    const data = join(fresh.dir, 'data');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_') && !k.startsWith('npm_')) env[k] = v;
    let out = '';
    const child = spawn('npm', ['run', 'daemon'], { cwd: repo, env: { ...env, TEND_DATA_DIR: data }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    track(child.pid!);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    let exited: number | null = null;
    child.on('exit', (code) => (exited = code ?? -1));
    await waitFor(() => exited !== null || existsSync(join(data, 'api.json')), 280_000, 'the daemon to serve its API', 200);
    expect(exited, out).toBeNull();
    const { pid } = JSON.parse(readFileSync(join(data, 'daemon.pid'), 'utf8')) as { pid: number };
    expect(alive(track(pid))).toBe(true);
    process.kill(-child.pid!, 'SIGTERM');
    await waitFor(() => exited !== null, 30_000, 'npm run daemon to stop');
  }, 320_000);
});
