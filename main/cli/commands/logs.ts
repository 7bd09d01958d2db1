import type { Command } from 'commander';
import type { RunRow } from '../../engine/domain/types.js';
import type { Store } from '../../engine/store/store.js';
import { action, cliSettings, dataDirPath, usage, withStore } from '../io.js';

/** The lines an external run sent with `tend report … log`, oldest first; null for a run Tend started. */
function externalLog(store: Store, run: RunRow): string | null {
  if (!store.routines.get(run.routineId)?.external) return null;
  const lines = store.events
    .externalLog(run.routineId, run.id, 10_000)
    .reverse()
    .map((e) => `${new Date(e.at).toISOString()} ${e.message}\n`);
  return lines.join('');
}

export interface PrintLogsOptions {
  /** Where the run's output is: the backend that ran it, and its job directory. */
  backend: string | null;
  runDir: string | null;
  label: string;
  stream: string;
  tail?: string;
  follow?: boolean;
  /** The run's secret values (its arguments and environment): shown as *** (the files keep them). */
  secrets: string[];
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
  const [{ standaloneBackends }, { runFiles }, { maskText }, { maskFollowed }] = await Promise.all([
    import('../../engine/host/backends.js'),
    import('../../engine/run-files.js'),
    import('../../engine/mask.js'),
    import('../../engine/mask-stream.js'),
  ]);
  const stream = o.stream as 'stdout' | 'stderr';
  const lastLines = (text: string): string => {
    if (lines === null) return text;
    const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
    return lines === 0 ? '' : all.slice(-lines).join('\n') + (text.endsWith('\n') ? '\n' : '');
  };
  if (!o.runDir) return;
  const [dir, settings] = await Promise.all([dataDirPath(), cliSettings()]);
  // Read through the backend that ran it, as the daemon reads it (a worker's run: on that host).
  await withStore(async (store) => {
    const backends = standaloneBackends(dir, store, settings);
    const files = runFiles((name) => backends.get(name));
    if (!o.follow) {
      process.stdout.write(maskText(lastLines(await files.tail(o, stream, TAIL_BYTES)), o.secrets));
      return;
    }
    const stop = new AbortController();
    const onSig = () => stop.abort();
    process.once('SIGINT', onSig);
    try {
      // The tail and what follows come from one reader, so nothing written in between is lost.
      // Ends by itself once the job is over and everything it wrote was read.
      const chunks = files.follow(o, stream, { signal: stop.signal, tailBytes: TAIL_BYTES, tailFilter: lastLines });
      for await (const chunk of maskFollowed(chunks, o.secrets)) process.stdout.write(chunk);
    } finally {
      process.off('SIGINT', onSig);
    }
  });
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
        const { secretsOf } = await import('../../engine/mask.js');
        const found = await withStore((s) => {
          const byId = s.runs.get(ref);
          if (byId) return { run: byId, newest: byId, externalLines: externalLog(s, byId), secrets: secretsOf(s.routines.get(byId.routineId)) };
          const routineId = s.routines.get(expandRoutineId(ref)) ? expandRoutineId(ref) : ref;
          const newest = s.runs.latest(routineId);
          if (!newest) return null;
          // A queued retry has no output yet: the latest run that has some is what is worth reading.
          const run = newest.runDir || s.routines.get(routineId)?.external ? newest : (s.runs.history(routineId, 50).find((r) => r.runDir !== null) ?? newest);
          return { run, newest, externalLines: externalLog(s, run), secrets: secretsOf(s.routines.get(run.routineId)) };
        });
        if (!found) throw notFound(`routine or run ${ref}`);
        const { run, newest, externalLines, secrets } = found;
        const what = `run ${run.id} (${run.status}, attempt ${run.attempt}, scheduled ${new Date(run.scheduledAt).toISOString()})`;
        // Which run this is goes to stderr: stdout stays the log itself.
        if (newest.id !== run.id) process.stderr.write(`tend: ${what}; the newest, run ${newest.id} (${newest.status}${newest.notBefore ? ` at ${new Date(newest.notBefore).toISOString()}` : ''}), has no output yet\n`);
        else if (run.runDir || externalLines) process.stderr.write(`tend: ${what}\n`);
        if (externalLines !== null) {
          // An external routine's output is what it sent with `tend report ID log`.
          process.stdout.write(externalLines);
          return;
        }
        await printLogs({
          backend: run.backend,
          runDir: run.runDir,
          label: `run ${run.id}`,
          stream: o.stream,
          tail: o.tail,
          follow: o.follow,
          secrets,
        });
      }),
    );
}
