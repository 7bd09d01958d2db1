// pm2 beside Tend in the restart bench: a dependency of the bench alone (bench/pm2/package.json,
// installed there on demand), run with its own PM2_HOME so it touches nothing of the user's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PREFIX = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'pm2');
const BIN = join(PREFIX, 'node_modules', 'pm2', 'bin', 'pm2');

/** pm2's CLI, installing it into bench/pm2 first if needed; null when it cannot be had. */
export function pm2Bin(): string | null {
  if (existsSync(BIN)) return BIN;
  try {
    execFileSync('npm', ['ci', '--prefix', PREFIX, '--no-audit', '--no-fund'], { stdio: 'ignore', timeout: 180_000 });
  } catch {
    return null;
  }
  return existsSync(BIN) ? BIN : null;
}

export interface Pm2 {
  run(args: string[]): string;
  /** Resident memory of pm2's daemon (MiB). */
  daemonRssMiB(): number | null;
  close(): void;
}

export function startPm2(bin: string): Pm2 {
  const home = mkdtempSync(join(os.tmpdir(), 'tend-bench-pm2-'));
  const env = { ...process.env, PM2_HOME: home };
  const run = (args: string[]) => execFileSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return {
    run,
    daemonRssMiB() {
      try {
        const pid = Number(execFileSync('cat', [join(home, 'pm2.pid')], { encoding: 'utf8' }).trim());
        const m = /VmRSS:\s+(\d+) kB/.exec(execFileSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }));
        return m ? Number(m[1]) / 1024 : null;
      } catch {
        return null;
      }
    },
    close() {
      try {
        run(['kill']);
      } catch {
        /* gone */
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}
