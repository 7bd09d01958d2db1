import type { Command } from 'commander';
import { action, usage, withStore } from '../io.js';

export interface PrintLogsOptions {
  runDir: string | null;
  label: string;
  stream: string;
  tail?: string;
  follow?: boolean;
}

const TAIL_BYTES = 1024 * 1024;

/** Print a run's captured stream: the tail only (never the whole file), then follow if asked. */
export async function printLogs(o: PrintLogsOptions): Promise<void> {
  if (o.stream !== 'stdout' && o.stream !== 'stderr') usage('--stream', 'stdout or stderr');
  let lines: number | null = null;
  if (o.tail !== undefined) {
    lines = Number(o.tail);
    if (!Number.isSafeInteger(lines) || lines < 0) usage('--tail', `a number of lines, got "${o.tail}"`);
  }
  if (!o.runDir) {
    process.stderr.write(`tend: ${o.label} has not started yet: no output\n`);
    if (!o.follow) return;
  }
  const { tailLog, followLog } = await import('../../../worker/local/logs.js');
  const stream = o.stream as 'stdout' | 'stderr';
  const lastLines = (text: string): string => {
    if (lines === null) return text;
    const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
    return lines === 0 ? '' : all.slice(-lines).join('\n') + (text.endsWith('\n') ? '\n' : '');
  };
  if (!o.runDir) return;
  if (!o.follow) {
    process.stdout.write(lastLines(tailLog(o.runDir, stream, TAIL_BYTES)));
    return;
  }
  const stop = new AbortController();
  const onSig = () => stop.abort();
  process.once('SIGINT', onSig);
  try {
    // The tail and what follows come from one reader, so nothing written in between is lost.
    // Ends by itself once the job is over and everything it wrote was read.
    for await (const chunk of followLog(o.runDir, stream, { signal: stop.signal, tailBytes: TAIL_BYTES, tailFilter: lastLines })) process.stdout.write(chunk);
  } finally {
    process.off('SIGINT', onSig);
  }
}

export function register(program: Command): void {
  program
    .command('logs <routine-or-run>')
    .description("print a run's output: a routine id (its latest run) or a run id")
    .option('--stream <stream>', 'stdout or stderr', 'stdout')
    .option('--tail <n>', 'last N lines')
    .option('--follow', 'keep printing new output as it is written')
    .action(
      action(async (ref: string, o: { stream: string; tail?: string; follow?: boolean }) => {
        const { expandRoutineId } = await import('../../engine/domain/schema.js');
        const { notFound } = await import('../../engine/errors.js');
        const run = await withStore((s) => s.runs.get(ref) ?? s.runs.latest(expandRoutineId(ref)) ?? s.runs.latest(ref));
        if (!run) throw notFound(`routine or run ${ref}`);
        await printLogs({
          runDir: run.runDir,
          label: `run ${run.id}`,
          stream: o.stream,
          tail: o.tail,
          follow: o.follow,
        });
      }),
    );
}
