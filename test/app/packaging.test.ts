// Packaging: electron-builder with this repo's electron-builder.yml, `--linux dir`, against a
// stand-in Electron distribution (the real one cannot be downloaded here) and a stand-in for
// the Electron build of better-sqlite3 (native/electron/). What is checked is our configuration's
// result: the asar holds main, worker, preload, renderer and the tray icons; the package's entry
// exists inside it; the Electron build of better-sqlite3 is unpacked beside it where the app looks;
// nothing is rebuilt in place (the repository's better-sqlite3 is byte-identical afterwards); the
// GUI is `tend-desktop` and the `tend` launcher runs the CLI with the app's runtime.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sqliteBindingPath } from '../../main/engine/store/sqlite-binding.js';
import { treeDigest } from '../helpers/tree-digest.js';

const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));

interface AsarEntry {
  size?: number;
  offset?: string;
  unpacked?: boolean;
  files?: Record<string, AsarEntry>;
  link?: string;
}

/** Read an asar archive's header (a pickled JSON directory tree) and files, without a library. */
function readAsar(file: string): { files: Map<string, AsarEntry>; read(path: string): Buffer } {
  const buf = readFileSync(file);
  const headerSize = buf.readUInt32LE(4);
  const jsonLength = buf.readUInt32LE(12);
  const header = JSON.parse(buf.toString('utf8', 16, 16 + jsonLength)) as AsarEntry;
  const base = 8 + headerSize;
  const files = new Map<string, AsarEntry>();
  const walk = (dir: AsarEntry, prefix: string) => {
    for (const [name, entry] of Object.entries(dir.files ?? {})) {
      const path = prefix ? `${prefix}/${name}` : name;
      files.set(path, entry);
      if (entry.files) walk(entry, path);
    }
  };
  walk(header, '');
  return {
    files,
    read(path) {
      const e = files.get(path);
      if (!e || e.offset === undefined || e.size === undefined) throw new Error(`${path} is not a packed file in ${file}`);
      const at = base + Number(e.offset);
      return buf.subarray(at, at + e.size);
    },
  };
}

describe('packaging (electron-builder --linux dir, stand-in Electron)', () => {
  let work: string;
  let out: string;
  let result: { status: number | null; output: string };
  let renderer: 'built' | 'placeholder';
  let sqliteBefore: string;
  let standInBinding: Buffer;
  const SQLITE = join(REPO, 'node_modules', 'better-sqlite3');

  beforeAll(() => {
    for (const need of ['dist/main/app/main.js', 'dist/main/engine/engine.js', 'dist/worker']) {
      if (!existsSync(join(REPO, need))) throw new Error(`${need} is missing: run \`npm run build\` before this test`);
    }
    if (!existsSync(join(REPO, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))) throw new Error('better-sqlite3 is not built (npm rebuild better-sqlite3)');
    // The config must never rebuild node_modules in place: refuse to run it (on the shared tree) if it would.
    const config = parse(readFileSync(join(REPO, 'electron-builder.yml'), 'utf8')) as { npmRebuild?: boolean };
    if (config.npmRebuild !== false) throw new Error('electron-builder.yml must say npmRebuild: false (it would rebuild node_modules/better-sqlite3 in place)');
    sqliteBefore = treeDigest(SQLITE);
    work = mkdtempSync(join(tmpdir(), 'tend-pack-'));
    const proj = join(work, 'project');
    out = join(work, 'release');
    // A copy of what the package is made of, so that a placeholder renderer never lands in the repo.
    mkdirSync(join(proj, 'dist'), { recursive: true });
    for (const f of ['package.json', 'electron-builder.yml', 'build', 'resources', 'launcher']) cpSync(join(REPO, f), join(proj, f), { recursive: true });
    // dist/preload as `npm run build` leaves it (tsc's per-file output), then the bundle over it.
    for (const d of ['main', 'contract', 'worker', 'preload']) if (existsSync(join(REPO, 'dist', d))) cpSync(join(REPO, 'dist', d), join(proj, 'dist', d), { recursive: true });
    const pre = spawnSync(process.execPath, [join(REPO, 'scripts', 'build-preload.mjs'), '--out', join(proj, 'dist', 'preload')], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    if (pre.status !== 0) throw new Error(`build-preload failed: ${pre.stderr}`);
    if (existsSync(join(REPO, 'dist', 'renderer', 'index.html'))) {
      cpSync(join(REPO, 'dist', 'renderer'), join(proj, 'dist', 'renderer'), { recursive: true });
      renderer = 'built';
    } else {
      // The renderer is built by vite (npm run build:renderer); its absence must not hide packaging bugs.
      mkdirSync(join(proj, 'dist', 'renderer'), { recursive: true });
      writeFileSync(join(proj, 'dist', 'renderer', 'index.html'), '<!doctype html><title>Tend (placeholder renderer)</title>\n');
      renderer = 'placeholder';
    }
    symlinkSync(join(REPO, 'node_modules'), join(proj, 'node_modules'), 'dir');
    // The Electron build of better-sqlite3 (here a copy of the Node one: only its place is tested).
    mkdirSync(join(proj, 'native', 'electron'), { recursive: true });
    standInBinding = readFileSync(join(SQLITE, 'build', 'Release', 'better_sqlite3.node'));
    writeFileSync(join(proj, 'native', 'electron', 'better_sqlite3.node'), standInBinding);
    writeFileSync(join(proj, 'native', 'electron', 'stamp.json'), JSON.stringify({ electron: '45.5.0', abi: '150', platform: 'linux', arch: process.arch, betterSqlite3: '12.11.1' }));
    // The stand-in Electron: an executable `electron` and a resources/ directory.
    const electronDist = join(work, 'electron-dist');
    mkdirSync(join(electronDist, 'resources'), { recursive: true });
    // It says how it was started, so that the `tend` launcher's call can be checked.
    writeFileSync(join(electronDist, 'electron'), '#!/bin/sh\necho "ELECTRON_RUN_AS_NODE=$ELECTRON_RUN_AS_NODE"\nfor a in "$@"; do echo "arg $a"; done\nexit 0\n');
    chmodSync(join(electronDist, 'electron'), 0o755);

    const r = spawnSync(
      process.execPath,
      [join(REPO, 'node_modules', 'electron-builder', 'cli.js'), '--linux', 'dir', '--projectDir', proj, `-c.electronDist=${electronDist}`, `-c.directories.output=${out}`],
      { cwd: proj, encoding: 'utf8', timeout: 240_000, env: { ...process.env, CI: 'true', ELECTRON_BUILDER_CACHE: join(work, 'cache') } },
    );
    result = { status: r.status, output: `${r.stdout}\n${r.stderr}` };
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('electron-builder exits 0 and lays out the app binary, app.asar and app.asar.unpacked', () => {
    expect(result.status, result.output).toBe(0);
    const app = join(out, 'linux-unpacked');
    // The GUI is tend-desktop: `tend` is the CLI's name.
    expect(statSync(join(app, 'tend-desktop')).mode & 0o111).not.toBe(0);
    expect(existsSync(join(app, 'tend'))).toBe(false);
    expect(existsSync(join(app, 'resources', 'app.asar'))).toBe(true);
    expect(existsSync(join(app, 'resources', 'app.asar.unpacked'))).toBe(true);
  });

  it('the asar holds main, the contract client, worker, preload, renderer and the icons, and no source maps', () => {
    const asar = readAsar(join(out, 'linux-unpacked', 'resources', 'app.asar'));
    for (const f of [
      'package.json',
      'dist/main/app/main.js',
      'dist/main/app/shell.js',
      'dist/main/engine/engine.js',
      'dist/main/engine/api/server.js',
      'dist/contract/api-client.js',
      'dist/worker/local/local-backend.js',
      'dist/preload/preload.cjs',
      'dist/renderer/index.html',
      'resources/icon.png',
      'resources/tray/tray-green.png',
      'resources/tray/tray-amber.png',
      'resources/tray/tray-red@2x.png',
    ]) {
      expect(asar.files.has(f), `${f} in app.asar`).toBe(true);
    }
    expect([...asar.files.keys()].filter((f) => f.endsWith('.map'))).toEqual([]);
    // Only what the app is made of: no sources, tests or installers.
    expect([...asar.files.keys()].filter((f) => /^(main|test|renderer|preload|scripts|release)\//.test(f))).toEqual([]);
    // The entry Electron starts is the one package.json names.
    const pkg = JSON.parse(asar.read('package.json').toString('utf8')) as { main: string; type: string };
    expect(pkg.main).toBe('dist/main/app/main.js');
    expect(pkg.type).toBe('module');
    // The preload inside is the sandbox-ready bundle, alone (tsc's per-file output stays behind).
    expect([...asar.files.keys()].filter((f) => f.startsWith('dist/preload/'))).toEqual(['dist/preload/preload.cjs']);
    const preload = asar.read('dist/preload/preload.cjs').toString('utf8');
    expect([...new Set([...preload.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]))]).toEqual(['electron']);
    if (renderer === 'placeholder') console.warn('packaging test: dist/renderer was not built; packed a placeholder index.html');
  });

  it("the Electron build of better-sqlite3 is unpacked where the packaged app looks; better-sqlite3's sources, build tree and Node binary are not shipped", () => {
    const resources = join(out, 'linux-unpacked', 'resources');
    const asar = readAsar(join(resources, 'app.asar'));
    const unpacked = join(resources, 'app.asar.unpacked');
    expect(asar.files.get('native/electron/better_sqlite3.node')?.unpacked).toBe(true);
    expect(readFileSync(join(unpacked, 'native/electron/better_sqlite3.node')).equals(standInBinding)).toBe(true);
    // What the packaged app resolves, run from inside app.asar under Electron 45 (ABI 150).
    const electron = { ...process.versions, electron: '45.5.0', modules: '150' } as NodeJS.ProcessVersions;
    expect(sqliteBindingPath({ env: {}, versions: electron, root: join(resources, 'app.asar'), platform: 'linux', arch: process.arch })).toBe(join(unpacked, 'native', 'electron', 'better_sqlite3.node'));
    // better-sqlite3's JavaScript is packed; nothing of it needs unpacking.
    expect(asar.files.has('node_modules/better-sqlite3/lib/index.js')).toBe(true);
    expect(asar.files.get('node_modules/better-sqlite3/lib/index.js')?.unpacked).toBeUndefined();
    const shipped = [...asar.files.keys()].filter((f) => f.startsWith('node_modules/better-sqlite3/'));
    expect(shipped.filter((f) => /^node_modules\/better-sqlite3\/(deps|src|build|docs|benchmark)(\/|$)|\.(a|lib|o|gyp)$/.test(f))).toEqual([]);
    expect(existsSync(join(unpacked, 'node_modules'))).toBe(false);
    for (const dep of ['fastify', 'zod', 'cron-parser', 'yaml', 'commander', 'bindings']) {
      expect(asar.files.has(`node_modules/${dep}/package.json`), `${dep} packed`).toBe(true);
      expect(asar.files.get(`node_modules/${dep}/package.json`)?.unpacked).toBeUndefined();
    }
    // Development tools never ship.
    for (const dev of ['electron', 'electron-builder', 'vite', 'vitest', 'typescript', 'react']) expect(asar.files.has(`node_modules/${dev}`), `${dev} not packed`).toBe(false);
  });

  it("packaging rebuilt nothing in place: the repository's better-sqlite3 is byte-identical and still opens databases under Node", () => {
    expect(treeDigest(SQLITE)).toBe(sqliteBefore);
    const r = spawnSync(process.execPath, ['-e', `const D = require(${JSON.stringify(SQLITE)}); console.log(new D(':memory:').prepare('select 41 + 1 AS n').get().n)`], { encoding: 'utf8' });
    expect(r.stdout.trim(), r.stderr).toBe('42');
  });

  it('ships the `tend` launcher, which runs the packed CLI with the app binary as Node', () => {
    const resources = join(out, 'linux-unpacked', 'resources');
    const launcher = join(resources, 'bin', 'tend');
    expect(statSync(launcher).mode & 0o111).not.toBe(0);
    const asar = readAsar(join(resources, 'app.asar'));
    expect(asar.files.has('dist/main/cli/tend.js')).toBe(true);
    // The CLI bundle is CommonJS in a package of type module: its folder's package.json says so.
    expect(asar.files.has('dist/main/cli/package.json')).toBe(true);
    // Through a symlink, as /usr/bin/tend from the deb.
    const link = join(work, 'usr-bin-tend');
    symlinkSync(launcher, link);
    const r = spawnSync(link, ['daemon', 'status', '--json'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['ELECTRON_RUN_AS_NODE=1', `arg ${join(resources, 'app.asar', 'dist', 'main', 'cli', 'tend.js')}`, 'arg daemon', 'arg status', 'arg --json']);
  });

  it('the deb links /usr/bin/tend to the launcher and removes only its own link; the desktop names agree', () => {
    const install = readFileSync(join(REPO, 'build', 'linux', 'after-install.tpl'), 'utf8');
    const remove = readFileSync(join(REPO, 'build', 'linux', 'after-remove.tpl'), 'utf8');
    expect(install).toContain("ln -sf '/opt/${sanitizedProductName}/resources/bin/tend' '/usr/bin/tend'");
    expect(remove).toContain("if [ \"$(readlink /usr/bin/tend)\" = '/opt/${sanitizedProductName}/resources/bin/tend' ]; then");
    const config = parse(readFileSync(join(REPO, 'electron-builder.yml'), 'utf8')) as { linux: { executableName: string; syncDesktopName: boolean; desktop: { entry: { StartupWMClass: string } } }; electronFuses?: { runAsNode?: boolean } };
    // The launcher and every child of the app need Electron's RunAsNode fuse left on.
    expect(config.electronFuses?.runAsNode).not.toBe(false);
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { desktopName: string };
    expect(config.linux.executableName).toBe('tend-desktop');
    expect(config.linux.syncDesktopName).toBe(true);
    expect(pkg.desktopName).toBe('tend-desktop.desktop');
    expect(config.linux.desktop.entry.StartupWMClass).toBe('tend-desktop');
  });
});
