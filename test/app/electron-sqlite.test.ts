// scripts/electron-sqlite.mjs, the `npm start` step that gets better-sqlite3 for Electron's ABI:
// skipped when the stamp says the right build is there; when it cannot get one (here: no
// internet, and both sources pointed at a closed port so that a machine with internet fails the
// same way) it stops with a message saying why and what to do, and node_modules' better-sqlite3
// is left exactly as it was.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, scratch } from '../helpers/cli.js';
import { treeDigest } from '../helpers/tree-digest.js';

const SCRIPT = join(REPO, 'scripts', 'electron-sqlite.mjs');
const SQLITE = join(REPO, 'node_modules', 'better-sqlite3');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function run(out: string, extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [SCRIPT, '--out', out], { cwd: REPO, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...extra } });
}

describe('scripts/electron-sqlite.mjs', () => {
  it('does nothing when the stamp says this Electron, ABI, platform, arch and better-sqlite3 are built', () => {
    const s = scratch('tend-esql-');
    cleanups.push(s.remove);
    const out = join(s.dir, 'electron');
    mkdirSync(out);
    writeFileSync(join(out, 'better_sqlite3.node'), 'built');
    const want = {
      electron: JSON.parse(readFileSync(join(REPO, 'node_modules/electron/package.json'), 'utf8')).version,
      abi: readFileSync(join(REPO, 'node_modules/electron/abi_version'), 'utf8').trim(),
      platform: process.platform,
      arch: process.arch,
      betterSqlite3: JSON.parse(readFileSync(join(SQLITE, 'package.json'), 'utf8')).version,
    };
    writeFileSync(join(out, 'stamp.json'), JSON.stringify(want));
    const r = run(out, { npm_config_better_sqlite3_binary_host: 'http://127.0.0.1:9', TEND_ELECTRON_DIST_URL: 'http://127.0.0.1:9' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`up to date: ${join(out, 'better_sqlite3.node')}`);
    expect(readFileSync(join(out, 'better_sqlite3.node'), 'utf8')).toBe('built');
  });

  it('when neither a prebuilt nor a source build can be had: exit 1, why, the fix, and node_modules untouched', () => {
    const s = scratch('tend-esql-');
    cleanups.push(s.remove);
    const out = join(s.dir, 'electron');
    const before = treeDigest(SQLITE);
    // A stale stamp: the binary there was built for another Electron, so it must be rebuilt.
    mkdirSync(out);
    writeFileSync(join(out, 'stamp.json'), JSON.stringify({ electron: '1.0.0' }));
    const r = run(out, { npm_config_better_sqlite3_binary_host: 'http://127.0.0.1:9', TEND_ELECTRON_DIST_URL: 'http://127.0.0.1:9', TEND_ELECTRON_GYP_DIR: join(s.dir, 'gyp') });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/could not get better-sqlite3 [\d.]+ for Electron 45\.5\.0 \(NODE_MODULE_VERSION 150, /);
    expect(r.stderr).toContain('prebuilt download (prebuild-install)');
    expect(r.stderr).toContain('build from source (node-gyp)');
    expect(r.stderr).toContain('run\n  `npm run electron:sqlite` again, or set TEND_SQLITE_BINDING');
    expect(r.stderr).toContain('node_modules/better-sqlite3 (the build for Node the CLI and the tests use) was not touched');
    expect(existsSync(join(out, 'better_sqlite3.node'))).toBe(false);
    expect(treeDigest(SQLITE)).toBe(before);
  });
});
