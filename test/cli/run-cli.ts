// The CLI tests' view of the built `tend` (test/helpers/cli.ts): one command against a data dir,
// and a scratch data dir with a `tend` bound to it. Without dist/ they fail at once, saying so.
import { cpSync } from 'node:fs';
import { scratch, tend, tendOk, type CliResult } from '../helpers/cli.js';

export { REPO, type CliResult } from '../helpers/cli.js';

export interface RunOptions {
  /** Data dir (TEND_DATA_DIR) the command uses. */
  dataDir: string;
  /** Written to the command's stdin. */
  input?: string;
  /** Extra environment; TZ is UTC unless given, so that "this machine's time zone" is known. */
  env?: Record<string, string>;
  cwd?: string;
}

/** `tend ARGS…`, synchronously. */
export function runCli(args: string[], o: RunOptions): CliResult {
  return tend(o.dataDir, args, o.env, { cwd: o.cwd, input: o.input });
}

/** A scratch data dir (a copy of `from`, when given) and a `tend` bound to it. */
export function cliSandbox(from?: string): {
  dir: string;
  tend: (...args: string[]) => CliResult;
  /** Runs and expects exit 0; returns stdout (parsed when `--json` was passed). */
  ok: <T = unknown>(...args: string[]) => T;
  remove: () => void;
} {
  const box = scratch('tend-cli-');
  if (from) cpSync(from, box.dir, { recursive: true });
  return {
    dir: box.dir,
    tend: (...args) => tend(box.dir, args),
    ok: <T = unknown>(...args: string[]) => tendOk<T>(box.dir, args),
    remove: box.remove,
  };
}
