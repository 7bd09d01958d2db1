// `tend service …`: a systemd user unit on Linux, a LaunchAgent on macOS. The generated files are
// plain text (tested by content); the service manager is asked only when it is running.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { TendError } from '../errors.js';

export interface ServiceSpec {
  node: string;
  entry: string;
  dataDir: string;
  /** TEND_DATA_DIR was given explicitly: preserve it in the unit. */
  explicitDataDir: boolean;
  /** `node` is the desktop app's binary (the packaged `tend` launcher): run it as Node. */
  runAsNode?: boolean;
}

export const SYSTEMD_NAME = 'tend.service';
export const LAUNCHD_LABEL = 'dev.tend.daemon';

export function systemdUnitPath(home = os.homedir()): string {
  return join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'systemd', 'user', SYSTEMD_NAME);
}

export function launchAgentPath(home = os.homedir()): string {
  return join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
}

const SAFE = /^[\w@+=:,./-]+$/;
/**
 * One ExecStart argument (systemd.service "Command lines"): double-quoted when needed, with `\`
 * and `"` escaped, `$` doubled (no variable expansion) and `%` doubled (no specifier expansion).
 */
const q = (s: string) => (SAFE.test(s) ? s : `"${s.replace(/\$/g, '$$$$').replace(/%/g, '%%')}"`);
/** The executable (first word): systemd substitutes no variables there, so a `$` stays as it is. */
const qExe = (s: string) => (SAFE.test(s) ? s : `"${s.replace(/%/g, '%%')}"`);

/**
 * Paths a unit file cannot carry faithfully: a `"` or `\` (systemd's quoting turns them into
 * escapes that differ between the executable, arguments and Environment=), a line break. Refused,
 * with what to do, before anything is written.
 */
export function systemdProblems(s: ServiceSpec): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const check = (field: string, what: string, value: string) => {
    const bad = [...new Set(value.match(/["\\\n\r]/g) ?? [])];
    if (bad.length) out.push({ path: field, message: `${what} ${JSON.stringify(value)} contains ${bad.map((c) => JSON.stringify(c)).join(' and ')}, which a systemd unit cannot express: move it to a path without ${bad.length > 1 ? 'them' : 'it'}` });
  };
  check('node', 'the Node executable', s.node);
  check('entry', 'the tend entry file', s.entry);
  if (s.explicitDataDir) check('TEND_DATA_DIR', 'the data dir', s.dataDir);
  return out;
}
/** An Environment= assignment: quoted as a whole when needed; `$` is literal there, `%` is not. */
const envLine = (name: string, value: string) =>
  SAFE.test(value) ? `Environment=${name}=${value}` : `Environment="${name}=${value.replace(/[\\"]/g, '\\$&').replace(/%/g, '%%')}"`;

export function systemdUnit(s: ServiceSpec): string {
  const problems = systemdProblems(s);
  if (problems.length) throw new TendError('INVALID', problems.map((p) => p.message).join('; '), problems);
  return [
    '[Unit]',
    'Description=Tend scheduler daemon',
    'After=default.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${qExe(s.node)} ${q(s.entry)} daemon run --quiet`,
    ...(s.explicitDataDir ? [envLine('TEND_DATA_DIR', s.dataDir)] : []),
    ...(s.runAsNode ? [envLine('ELECTRON_RUN_AS_NODE', '1')] : []),
    'Restart=on-failure',
    'RestartSec=10',
    // Jobs live in their own sessions and must outlive a daemon restart.
    'KillMode=process',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function envDict(s: ServiceSpec): string {
  const vars = [...(s.explicitDataDir ? [['TEND_DATA_DIR', s.dataDir]] : []), ...(s.runAsNode ? [['ELECTRON_RUN_AS_NODE', '1']] : [])];
  if (vars.length === 0) return '';
  return `  <key>EnvironmentVariables</key><dict>${vars.map(([k, v]) => `<key>${k}</key><string>${x(v!)}</string>`).join('')}</dict>\n`;
}

export function launchAgent(s: ServiceSpec): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array><string>${x(s.node)}</string><string>${x(s.entry)}</string><string>daemon</string><string>run</string><string>--quiet</string></array>
${envDict(s)}  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>ThrottleInterval</key><integer>10</integer>
  <key>AbandonProcessGroup</key><true/>
</dict>
</plist>
`;
}

/** Whether the user's systemd instance answers; on machines without it, say so clearly. */
export function systemdAvailable(): { ok: boolean; reason: string | null } {
  try {
    execFileSync('systemctl', ['--user', 'is-system-running'], { stdio: 'pipe', timeout: 5000 });
    return { ok: true, reason: null };
  } catch (err) {
    const e = err as { code?: string; stdout?: Buffer; status?: number };
    if (e.code === 'ENOENT') return { ok: false, reason: 'systemctl is not installed: systemd does not manage this machine' };
    const out = e.stdout?.toString().trim() ?? '';
    // "degraded" exits non-zero but the manager is running.
    if (['degraded', 'running', 'starting', 'initializing'].includes(out)) return { ok: true, reason: null };
    return { ok: false, reason: `the systemd user manager is not running here (${out || `exit ${e.status ?? '?'}`})` };
  }
}

export function systemctl(args: string[]): string {
  return execFileSync('systemctl', ['--user', ...args], { stdio: 'pipe', timeout: 15_000 }).toString();
}
