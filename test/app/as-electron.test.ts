// The engine as the desktop app runs it, in a Node process made to look like Electron
// (as-electron/look-like-electron.mjs): process.versions.electron set, the better-sqlite3 npm
// built for Node refused as Electron's loader refuses another ABI, process.execPath a stand-in
// app binary that runs Node only with ELECTRON_RUN_AS_NODE=1 and otherwise records that a second
// app would have started. Real data dirs, real jobs, the real spawn helper.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, REPO, scratch, TEND, track, killTracked } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const HERE = join(REPO, 'test', 'app', 'as-electron');
const PRELOAD = join(HERE, 'look-like-electron.mjs');
const NODE_ABI_BINARY = join(REPO, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

const cleanups: (() => void)[] = [];
afterEach(async () => {
  await killTracked();
  for (const c of cleanups.splice(0)) c();
});

interface Box {
  root: string;
  record: string;
  /** The stand-in for the app binary (process.execPath under Electron). */
  app: string;
}

function box(): Box {
  const s = scratch('tend-as-electron-');
  cleanups.push(s.remove);
  const record = join(s.dir, 'record');
  const app = join(s.dir, 'tend-desktop');
  writeFileSync(
    app,
    [
      '#!/bin/sh',
      'if [ "$ELECTRON_RUN_AS_NODE" = "1" ]; then',
      `  printf 'as-node %s\\n' "$*" >> '${record}'`,
      `  exec '${process.execPath}' --import '${PRELOAD}' "$@"`,
      'fi',
      `printf 'second-app %s\\n' "$*" >> '${record}'`,
      'exit 1',
      '',
    ].join('\n'),
  );
  chmodSync(app, 0o755);
  return { root: s.dir, record, app };
}

function records(b: Box): string[] {
  return existsSync(b.record) ? readFileSync(b.record, 'utf8').split('\n').filter(Boolean) : [];
}

/** run-host.mjs under the Electron look-alike; its JSON lines and exit code. */
function runHost(b: Box, env: Record<string, string>): Promise<{ code: number | null; lines: Record<string, any>[]; stderr: string }> {
  assertBuilt();
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) base[k] = v;
  const child = spawn(process.execPath, ['--import', PRELOAD, join(HERE, 'run-host.mjs'), join(b.root, 'data')], {
    cwd: REPO,
    env: { ...base, TZ: 'UTC', TEND_FAKE_ELECTRON_RECORD: b.record, TEND_FAKE_ELECTRON_EXEC: b.app, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve) =>
    child.on('exit', (code) => resolve({ code, stderr, lines: stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>) })),
  );
}

describe('the engine under Electron (a Node process made to look like it)', () => {
  it('without an Electron build of better-sqlite3 the start fails at once, naming Electron and `npm run electron:sqlite`; Node\'s binary is never loaded', async () => {
    const b = box();
    const r = await runHost(b, {});
    expect(r.code, r.stderr).toBe(3);
    const failed = r.lines[0]!;
    expect(failed.code).toBe('UNAVAILABLE');
    expect(failed.failed).toContain('Electron 45.5.0');
    expect(failed.failed).toContain('`npm run electron:sqlite`');
    expect(failed.failed).toContain('TEND_SQLITE_BINDING');
    expect(failed.failed).not.toMatch(/was compiled against a different Node\.js version/);
    // Nothing was claimed: the data dir is free for the next try.
    expect(existsSync(join(b.root, 'data', 'daemon.pid'))).toBe(false);
    expect(records(b)).toEqual([]);
  });

  it('TEND_SQLITE_BINDING naming a binary Electron refuses gives a clear message, not the ABI stack', async () => {
    const b = box();
    const r = await runHost(b, { TEND_SQLITE_BINDING: NODE_ABI_BINARY });
    expect(r.code, r.stderr).toBe(3);
    expect(r.lines[0]!.failed).toMatch(/^Electron 45\.5\.0 cannot load the SQLite module .*better_sqlite3\.node: The module '.*' ?; rebuild it for this Electron with `npm run electron:sqlite`/);
    expect(records(b).filter((l) => l.startsWith('second-app'))).toEqual([]);
  });

  it('TEND_SQLITE_BINDING naming a missing file says so', async () => {
    const b = box();
    const r = await runHost(b, { TEND_SQLITE_BINDING: join(b.root, 'nope.node') });
    expect(r.code).toBe(3);
    expect(r.lines[0]!.failed).toBe(`TEND_SQLITE_BINDING: ${join(b.root, 'nope.node')} does not exist (it must name better-sqlite3's better_sqlite3.node built for Electron 45.5.0, NODE_MODULE_VERSION ${process.versions.modules})`);
  });

  it('with TEND_SQLITE_BINDING: a batch job and a realtime routine run, the spawn helper runs as Node, nothing starts as a second app, jobs inherit none of the AppImage\'s variables', async () => {
    const b = box();
    // A usable binary kept outside node_modules/better-sqlite3, as the Electron build is.
    const binding = join(b.root, 'electron-abi', 'better_sqlite3.node');
    mkdirSync(join(b.root, 'electron-abi'));
    copyFileSync(NODE_ABI_BINARY, binding);
    const mount = join(b.root, '.mount_TendAbc');
    const r = await runHost(b, {
      TEND_SQLITE_BINDING: binding,
      // What an AppImage's runtime and AppRun leave in the app's environment.
      APPIMAGE: join(b.root, 'Tend-0.1.0.AppImage'),
      APPDIR: mount,
      ARGV0: 'Tend-0.1.0.AppImage',
      OWD: b.root,
      PATH: `${mount}/usr/bin:${mount}/usr/sbin:${process.env.PATH}`,
      LD_LIBRARY_PATH: `${mount}/usr/lib:/opt/keep/lib`,
    });
    expect(r.code, `${r.stderr}\n${JSON.stringify(r.lines)}`).toBe(0);
    expect(r.lines).toContainEqual({ started: 'engine', pid: expect.any(Number) });
    expect(r.lines).toContainEqual({ job: 'COMPLETED' });
    expect(r.lines).toContainEqual(expect.objectContaining({ realtime: 'RUNNING' }));
    expect(r.lines.at(-1)).toEqual({ closed: true });

    const seen = records(b);
    expect(seen.filter((l) => l.startsWith('second-app')), 'children started as a second app').toEqual([]);
    expect(seen.filter((l) => l.startsWith('node-abi-load')), "loads of node_modules' better-sqlite3").toEqual([]);
    // The spawn helper was started through the app binary, as Node.
    expect(seen.some((l) => l.startsWith('as-node -e'))).toBe(true);

    const env = r.lines.find((l) => l.jobEnv)!.jobEnv as Record<string, string>;
    for (const k of ['APPIMAGE', 'APPDIR', 'ARGV0', 'OWD', 'ELECTRON_RUN_AS_NODE']) expect(env[k], k).toBeUndefined();
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.LD_LIBRARY_PATH).toBe('/opt/keep/lib');
    expect(env.TEND_ROUTINE).toBe('job-1');
  });

  describe('the CLI run by the app\'s runtime, as the packaged `tend` launcher runs it', () => {
    /** `tend ARGS` under the look-alike, with a usable binding kept outside node_modules. */
    function cli(b: Box, args: string[], env: Record<string, string> = {}) {
      const binding = join(b.root, 'better_sqlite3.node');
      if (!existsSync(binding)) copyFileSync(NODE_ABI_BINARY, binding);
      const base: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) base[k] = v;
      return spawnSync(process.execPath, ['--import', PRELOAD, TEND, ...args], {
        cwd: REPO,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...base, TZ: 'UTC', TEND_DATA_DIR: join(b.root, 'data'), TEND_FAKE_ELECTRON_RECORD: b.record, TEND_FAKE_ELECTRON_EXEC: b.app, TEND_SQLITE_BINDING: binding, ELECTRON_RUN_AS_NODE: '1', ...env },
      });
    }

    it('`tend daemon ensure` starts the daemon through the app binary as Node, never as a second app', async () => {
      const b = box();
      const up = cli(b, ['daemon', 'ensure', '--json']);
      try {
        expect(up.status, up.stderr).toBe(0);
        const pid = (JSON.parse(up.stdout) as { pid: number }).pid;
        track(pid);
        expect(records(b).filter((l) => l.startsWith('second-app'))).toEqual([]);
        expect(records(b)).toContainEqual(`as-node ${TEND} daemon run --quiet`);
        await waitFor(() => cli(b, ['daemon', 'status', '--json']).status === 0, 20_000, 'daemon status through the launcher');
      } finally {
        cli(b, ['daemon', 'stop']);
      }
      expect(records(b).filter((l) => l.startsWith('second-app') || l.startsWith('node-abi-load'))).toEqual([]);
    });

    it('`tend service install` writes a unit that runs the app binary as Node; from an AppImage it refuses', () => {
      const b = box();
      const config = join(b.root, 'config');
      const r = cli(b, ['service', 'install', '--json'], { XDG_CONFIG_HOME: config });
      expect(r.status, r.stderr).toBe(0);
      const unit = readFileSync(join(config, 'systemd', 'user', 'tend.service'), 'utf8');
      expect(unit).toContain(`ExecStart=${b.app} ${TEND} daemon run --quiet`);
      expect(unit).toContain('Environment=ELECTRON_RUN_AS_NODE=1');
      const appImage = cli(b, ['service', 'install'], { XDG_CONFIG_HOME: join(b.root, 'config2'), APPIMAGE: join(b.root, 'Tend.AppImage') });
      expect(appImage.status).not.toBe(0);
      expect(appImage.stderr).toContain('tend service install cannot run the daemon from the AppImage');
    });
  });
});
