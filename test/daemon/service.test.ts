// `tend service`: the generated systemd user unit and LaunchAgent, tested by content, and the
// commands on a machine whose service manager is not running (these machines): they say so and
// exit non-zero, and install writes the unit where systemd would look for it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchAgent, launchAgentPath, systemdAvailable, systemdUnit, systemdUnitPath, type ServiceSpec } from '../../main/engine/daemon/service.js';
import { assertBuilt, REPO, scratch, TEND } from '../helpers/cli.js';

const spec = (over: Partial<ServiceSpec> = {}): ServiceSpec => ({ node: '/usr/bin/node', entry: '/opt/tend/dist/main/cli/tend.js', dataDir: '/home/me/tend-data', explicitDataDir: true, ...over });

const unitLines = (text: string) => text.split('\n');

describe('systemd user unit', () => {
  it('restarts on failure after 10 s, runs the daemon quietly, and leaves jobs alone on stop', () => {
    const lines = unitLines(systemdUnit(spec()));
    expect(lines).toContain('[Service]');
    expect(lines).toContain('Restart=on-failure');
    expect(lines).toContain('RestartSec=10');
    expect(lines).toContain('ExecStart=/usr/bin/node /opt/tend/dist/main/cli/tend.js daemon run --quiet');
    expect(lines).toContain('KillMode=process');
    expect(lines).toContain('WantedBy=default.target');
    // Sections in order, each key once.
    expect(lines.filter((l) => l.startsWith('['))).toEqual(['[Unit]', '[Service]', '[Install]']);
    expect(lines.filter((l) => l.startsWith('Restart='))).toHaveLength(1);
  });

  it('an explicit data dir is preserved; none given, the unit sets none', () => {
    expect(unitLines(systemdUnit(spec()))).toContain('Environment=TEND_DATA_DIR=/home/me/tend-data');
    const implicit = systemdUnit(spec({ explicitDataDir: false }));
    expect(implicit).not.toContain('TEND_DATA_DIR');
    expect(implicit).not.toContain('/home/me/tend-data');
  });

  it('paths with spaces, $ and % are quoted so systemd neither splits nor expands them', () => {
    const text = systemdUnit(spec({ node: '/opt/my node/bin/node', entry: '/srv/$HOME/tend.js', dataDir: '/data/100% mine' }));
    const lines = unitLines(text);
    expect(lines).toContain('ExecStart="/opt/my node/bin/node" "/srv/$$HOME/tend.js" daemon run --quiet');
    expect(lines).toContain('Environment="TEND_DATA_DIR=/data/100%% mine"');
  });

  it('a $ in the executable stays a single $: systemd substitutes no variables there (it kept $$ literally)', () => {
    const lines = unitLines(systemdUnit(spec({ node: '/opt/node$22/bin/node' })));
    expect(lines).toContain('ExecStart="/opt/node$22/bin/node" /opt/tend/dist/main/cli/tend.js daemon run --quiet');
  });

  it('paths with " or \\ are refused, naming which and why', () => {
    expect(() => systemdUnit(spec({ node: '/opt/a"b/node' }))).toThrow(/the Node executable "\/opt\/a\\"b\/node" contains "\\"", which a systemd unit cannot express/);
    expect(() => systemdUnit(spec({ entry: '/opt/a\\b/tend.js' }))).toThrow(/the tend entry file .* contains "\\\\"/);
    expect(() => systemdUnit(spec({ dataDir: '/data/"mine"' }))).toThrow(/the data dir/);
  });
});

describe('LaunchAgent', () => {
  it('keeps the daemon alive after a failure with a 10 s throttle and lets jobs outlive it', () => {
    const text = launchAgent(spec());
    expect(text).toContain('<key>Label</key><string>dev.tend.daemon</string>');
    expect(text).toContain('<array><string>/usr/bin/node</string><string>/opt/tend/dist/main/cli/tend.js</string><string>daemon</string><string>run</string><string>--quiet</string></array>');
    expect(text).toContain('<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>');
    expect(text).toContain('<key>ThrottleInterval</key><integer>10</integer>');
    expect(text).toContain('<key>RunAtLoad</key><true/>');
    expect(text).toContain('<key>AbandonProcessGroup</key><true/>');
    // Balanced plist elements.
    for (const tag of ['dict', 'array', 'plist']) expect(text.split(`<${tag}`).length).toBe(text.split(`</${tag}>`).length);
  });

  it("run by the desktop package's runtime (the app binary as Node), the agent sets ELECTRON_RUN_AS_NODE=1", () => {
    expect(launchAgent(spec({ runAsNode: true }))).toContain('<key>EnvironmentVariables</key><dict><key>TEND_DATA_DIR</key><string>/home/me/tend-data</string><key>ELECTRON_RUN_AS_NODE</key><string>1</string></dict>');
    expect(launchAgent(spec({ runAsNode: true, explicitDataDir: false }))).toContain('<key>EnvironmentVariables</key><dict><key>ELECTRON_RUN_AS_NODE</key><string>1</string></dict>');
    expect(launchAgent(spec())).not.toContain('ELECTRON_RUN_AS_NODE');
  });

  it('an explicit data dir is preserved (escaped); none given, none set', () => {
    expect(launchAgent(spec({ dataDir: '/data/a&b<c>' }))).toContain('<key>EnvironmentVariables</key><dict><key>TEND_DATA_DIR</key><string>/data/a&amp;b&lt;c&gt;</string></dict>');
    expect(launchAgent(spec({ explicitDataDir: false }))).not.toContain('TEND_DATA_DIR');
  });

  it('lives in ~/Library/LaunchAgents', () => {
    expect(launchAgentPath('/Users/me')).toBe('/Users/me/Library/LaunchAgents/dev.tend.daemon.plist');
  });
});

describe('tend service on a machine without a running service manager', () => {
  let box: ReturnType<typeof scratch>;
  beforeAll(() => assertBuilt());
  afterEach(() => box.remove());

  /** `tend service …` with HOME and the XDG dirs inside the scratch dir. */
  function service(args: string[], env: Record<string, string | undefined>) {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_') && !k.startsWith('XDG_')) base[k] = v;
    for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
    const r = spawnSync(process.execPath, [TEND, 'service', ...args], { cwd: REPO, env: base, encoding: 'utf8', timeout: 30_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it.skipIf(process.platform === 'darwin')('install refuses a data dir systemd cannot express before writing anything', () => {
    box = scratch('tend-svc-');
    const env = { HOME: join(box.dir, 'home'), XDG_CONFIG_HOME: join(box.dir, 'config'), TEND_DATA_DIR: join(box.dir, 'da"ta') };
    mkdirSync(env.HOME);
    const r = service(['install'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TEND_DATA_DIR: the data dir');
    expect(r.stderr).toContain('which a systemd unit cannot express');
    expect(existsSync(join(box.dir, 'config'))).toBe(false);
  });

  it.skipIf(process.platform === 'darwin')('install writes the unit under XDG_CONFIG_HOME with the explicit data dir; start says the manager is not running and exits non-zero', () => {
    // The premise: no systemd user manager answers here.
    expect(systemdAvailable().ok).toBe(false);
    box = scratch('tend-svc-');
    const env = { HOME: join(box.dir, 'home'), XDG_CONFIG_HOME: join(box.dir, 'config'), TEND_DATA_DIR: join(box.dir, 'data') };
    mkdirSync(env.HOME);
    const file = join(box.dir, 'config', 'systemd', 'user', 'tend.service');

    const notYet = service(['start'], env);
    expect(notYet.code).not.toBe(0);
    expect(notYet.stderr).toContain(`the service is not installed (${file})`);

    const install = service(['install', '--json'], env);
    expect(install.code, install.stderr).toBe(0);
    expect(JSON.parse(install.stdout)).toEqual({ file, started: null });
    const unit = readFileSync(file, 'utf8');
    expect(unit).toBe(systemdUnit({ node: process.execPath, entry: TEND, dataDir: env.TEND_DATA_DIR, explicitDataDir: true }));
    expect(unitLines(unit)).toContain(`Environment=TEND_DATA_DIR=${env.TEND_DATA_DIR}`);

    for (const verb of ['start', 'stop', 'restart', 'status']) {
      const r = service([verb], env);
      expect(r.code, `service ${verb}`).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr, `service ${verb}`).toMatch(/^tend: (the systemd user manager is not running here \(.+\)|systemctl is not installed: systemd does not manage this machine); the unit is at .+tend\.service\. Use `tend daemon ensure` instead\.\n$/);
    }

    const withStart = service(['install', '--start'], env);
    expect(withStart.code).not.toBe(0);
    expect(withStart.stdout).toMatch(/not started: .*(not running|not installed).*tend daemon ensure/);

    const gone = service(['uninstall'], env);
    expect(gone.code, gone.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it.skipIf(process.platform === 'darwin')('without TEND_DATA_DIR the unit sets none, and without XDG_CONFIG_HOME it goes to ~/.config', () => {
    box = scratch('tend-svc-');
    const home = join(box.dir, 'home');
    mkdirSync(home);
    const r = service(['install', '--json'], { HOME: home, XDG_DATA_HOME: join(box.dir, 'xdg-data') });
    expect(r.code, r.stderr).toBe(0);
    const file = join(home, '.config', 'systemd', 'user', 'tend.service');
    expect(JSON.parse(r.stdout).file).toBe(file);
    expect(systemdUnitPath(home)).toBe(process.env.XDG_CONFIG_HOME ? join(process.env.XDG_CONFIG_HOME, 'systemd', 'user', 'tend.service') : file);
    const unit = readFileSync(file, 'utf8');
    expect(unit).not.toContain('TEND_DATA_DIR');
    expect(unit).toContain('Restart=on-failure');
  });
});
