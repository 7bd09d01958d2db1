// CLI start: `tend daemon status --json`, `tend routine list --json` and `tend job post` wall
// time beside `node -e 0`, interleaved in one run (medians of 10), against a data dir with 100
// routines and no daemon.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { childEnv, scratch, TEND as CLI } from '../test/helpers/cli.js';
import { importIdleRoutines } from './routines.js';
import { median, round } from './stats.js';

function wallMs(args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, args, { env, stdio: 'ignore' });
  } catch {
    // status exits 1 without a daemon: the time is what counts
  }
  return performance.now() - t0;
}

export async function benchCli() {
  const box = scratch('tend-bench-cli-');
  const dir = box.dir;
  const env = childEnv(dir);
  try {
    importIdleRoutines(dir);
    const commands: Record<string, string[]> = {
      node: ['-e', '0'],
      status: [CLI, 'daemon', 'status', '--json'],
      list: [CLI, 'routine', 'list', '--json'],
      post: [CLI, 'job', 'post', '--', '/bin/true'],
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
    for (let i = 0; i < 10; i++) for (const [name, args] of Object.entries(commands)) times[name]!.push(wallMs(args, env));
    const nodeMs = median(times['node']!);
    const figure = (name: string) => ({ ms: round(median(times[name]!), 1), ratio: round(median(times[name]!) / nodeMs, 2) });
    return {
      name: 'cli',
      description: 'CLI commands beside `node -e 0` (medians of 10, interleaved), 100 routines, no daemon',
      nodeMs: round(nodeMs, 1),
      status: figure('status'),
      list: figure('list'),
      post: figure('post'),
      loadAverage1m: round(os.loadavg()[0]!, 2),
      targets: { statusRatio: 2 },
    };
  } finally {
    box.remove();
  }
}
