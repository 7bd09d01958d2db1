import type { Command } from 'commander';
import { action, print, usage, withStore } from '../io.js';

export function register(program: Command): void {
  const worker = program.command('worker').description('worker hosts that pull commands over the HTTP API');

  worker
    .command('token <computer>')
    .description('issue (or replace) the token of a worker computer: it may only fetch its own commands and report its own runs')
    .option('--json', 'machine-readable output')
    .action(
      action(async (computer: string, o: { json?: boolean }) => {
        if (!/^[^@\s:]+@[^@\s:]+$/.test(computer)) usage('computer', 'must look like user@COMPUTER');
        const { issueWorkerToken } = await import('../../engine/api/auth.js');
        const token = await withStore((s) => issueWorkerToken(s, computer, Date.now()));
        print(o.json, { computer, token }, () => token);
      }),
    );
}
