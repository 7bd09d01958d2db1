import { execFileSync } from 'node:child_process';
import type { Command } from 'commander';
import { TendError } from '../../engine/errors.js';
import { action, dataDirPath, print } from '../io.js';
import { ENTRY } from './daemon.js';

export function register(program: Command): void {
  const service = program.command('service').description('run the daemon under the user service manager (systemd on Linux, launchd on macOS)');

  service
    .command('install')
    .description('write the unit (and start it with --start)')
    .option('--start', 'enable and start it now')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { start?: boolean; json?: boolean }) => {
        const svc = await import('../../engine/daemon/service.js');
        const { mkdirSync, writeFileSync } = await import('node:fs');
        const { dirname } = await import('node:path');
        const { nodeExecPath } = await import('../../engine/node-runtime.js');
        const { electronVersion } = await import('../../engine/store/sqlite-binding.js');
        // The AppImage's runtime lives in a mount that is gone when it exits: a unit cannot use it.
        if (electronVersion() && process.env.APPIMAGE) {
          throw new TendError('REFUSED', `tend service install cannot run the daemon from the AppImage (its files live in a temporary mount); install the .deb, or use "Start at login" in the app's tray menu`);
        }
        const spec = { node: nodeExecPath(), entry: ENTRY, dataDir: await dataDirPath(), explicitDataDir: !!process.env.TEND_DATA_DIR, runAsNode: !!electronVersion() };
        const mac = process.platform === 'darwin';
        const file = mac ? svc.launchAgentPath() : svc.systemdUnitPath();
        // The text first: a path the unit cannot express is refused before anything is written.
        const text = mac ? svc.launchAgent(spec) : svc.systemdUnit(spec);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
        let started: string | null = null;
        if (o.start) started = startService(svc, mac, file);
        print(o.json, { file, started }, () => `wrote ${file}${started ? `\n${started}` : ''}`);
        // Asked to start it and it could not be: the unit is written, but say so in the exit code.
        if (started?.startsWith('not started')) process.exitCode = 1;
      }),
    );

  for (const verb of ['start', 'stop', 'restart', 'status', 'uninstall'] as const) {
    service
      .command(verb)
      .option('--json', 'machine-readable output')
      .action(
        action(async (o: { json?: boolean }) => {
          const svc = await import('../../engine/daemon/service.js');
          const { existsSync, rmSync } = await import('node:fs');
          const mac = process.platform === 'darwin';
          const file = mac ? svc.launchAgentPath() : svc.systemdUnitPath();
          if (verb !== 'uninstall' && !existsSync(file)) {
            const { TendError } = await import('../../engine/errors.js');
            throw new TendError('NOT_FOUND', `the service is not installed (${file}): run tend service install`);
          }
          let out = '';
          if (mac) out = launchctl(verb, file);
          else {
            const avail = svc.systemdAvailable();
            if (!avail.ok) {
              if (verb !== 'uninstall') {
                const { TendError } = await import('../../engine/errors.js');
                throw new TendError('UNAVAILABLE', `${avail.reason}; the unit is at ${file}. Use \`tend daemon ensure\` instead.`);
              }
            } else {
              const args = verb === 'uninstall' ? ['disable', '--now', svc.SYSTEMD_NAME] : [verb === 'status' ? 'status' : verb, svc.SYSTEMD_NAME];
              try {
                out = svc.systemctl(args);
              } catch (err) {
                out = ((err as { stdout?: Buffer }).stdout?.toString() ?? '') || (err as Error).message;
                if (verb !== 'status') throw err;
                process.exitCode = 1;
              }
            }
          }
          if (verb === 'uninstall') rmSync(file, { force: true });
          print(o.json, { action: verb, file, output: out.trim() }, () => out.trim() || `${verb}: done (${file})`);
        }),
      );
  }
}

function startService(svc: typeof import('../../engine/daemon/service.js'), mac: boolean, file: string): string {
  if (mac) return launchctl('start', file);
  const avail = svc.systemdAvailable();
  if (!avail.ok) return `not started: ${avail.reason}. Start it by hand with \`tend daemon ensure\`.`;
  svc.systemctl(['daemon-reload']);
  svc.systemctl(['enable', '--now', svc.SYSTEMD_NAME]);
  return 'enabled and started tend.service';
}

function launchctl(verb: string, file: string): string {
  const uid = process.getuid?.() ?? 0;
  const args: Record<string, string[]> = {
    start: ['bootstrap', `gui/${uid}`, file],
    stop: ['bootout', `gui/${uid}`, file],
    restart: ['kickstart', '-k', `gui/${uid}/dev.tend.daemon`],
    status: ['print', `gui/${uid}/dev.tend.daemon`],
    uninstall: ['bootout', `gui/${uid}`, file],
  };
  try {
    return execFileSync('launchctl', args[verb]!, { stdio: 'pipe' }).toString();
  } catch (err) {
    return (err as Error).message;
  }
}
