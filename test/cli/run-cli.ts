// Runs the real, built `tend` command as a child process against a scratch data dir.
// The CLI tests run after `npm run build`; without dist/ they fail at once, saying so.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const TEND = join(REPO, 'dist', 'main', 'cli', 'tend.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Data dir (TEND_DATA_DIR) the command uses. */
  dataDir: string;
  /** Written to the command's stdin. */
  input?: string;
  /** Extra environment; TZ defaults to UTC so that "this machine's time zone" is known. */
  env?: Record<string, string>;
  cwd?: string;
}

/** Throws with a clear message when the CLI has not been built. */
export function assertBuilt(): void {
  if (!existsSync(TEND)) throw new Error(`${TEND} not found: the CLI tests run the built CLI; run \`npm run build\` first`);
}

/** `tend ARGS…`, synchronously. */
export function runCli(args: string[], o: RunOptions): CliResult {
  assertBuilt();
  const env: Record<string, string> = {};
  // The parent's TEND_* settings must not leak into the child (a real data dir, a daemon interval…).
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) env[k] = v;
  Object.assign(env, { TZ: 'UTC', NO_COLOR: '1' }, o.env ?? {}, { TEND_DATA_DIR: o.dataDir });
  const r = spawnSync(process.execPath, [TEND, ...args], {
    cwd: o.cwd ?? REPO,
    env,
    input: o.input ?? '',
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A scratch data dir (a copy of `from`, when given) and a `tend` bound to it. */
export function cliSandbox(from?: string): {
  dir: string;
  tend: (...args: string[]) => CliResult;
  /** Runs and expects exit 0; returns stdout (parsed when `--json` was passed). */
  ok: <T = unknown>(...args: string[]) => T;
  remove: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'tend-cli-'));
  if (from) cpSync(from, dir, { recursive: true });
  const tend = (...args: string[]) => runCli(args, { dataDir: dir });
  const ok = <T = unknown>(...args: string[]): T => {
    const r = tend(...args);
    if (r.code !== 0) throw new Error(`tend ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
  };
  return { dir, tend, ok, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
