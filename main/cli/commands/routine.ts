import type { Command } from 'commander';
import { action, asFlags, collect, print, table, usage, withStore, dataDirPath } from '../io.js';
import { applyBackendFlags, BACKEND_FLAG_OF, backendFlags, type BackendFlags } from '../slurm-flags.js';

interface RoutineFlags extends BackendFlags {
  cron?: string;
  runtimes?: string;
  every?: string;
  at?: string;
  in?: string;
  realtime?: boolean;
  batch?: boolean;
  name?: string;
  tz?: string;
  after?: string[];
  schedule?: string;
  computer?: string;
  external?: boolean;
  cwd?: string;
  env?: string[];
  retry?: string;
  misfire?: string;
  overlap?: string;
  timeout?: string;
  heartbeat?: string;
  grace?: string;
  tolerance?: string;
  logCap?: string;
  output?: string[];
  revision?: string;
  json?: boolean;
}

function definitionFlags(cmd: Command): Command {
  return backendFlags(cmd)
    .option('--cron <expr>', 'five-field cron expression')
    .option('--runtimes <list>', 'HH:MM start times, comma separated')
    .option('--every <duration>', 'interval, counted from the end of the previous run')
    .option('--at <time>', 'once, at an ISO 8601 time (no offset: the routine time zone)')
    .option('--in <duration>', 'once, this long from now')
    .option('--realtime', 'long-running: kept alive, restarted when it dies or goes silent')
    .option('--batch', 'timed batch routine (edit: turn a realtime routine back into batch)')
    .option('--name <name>', 'group shown on the Today page')
    .option('--tz <zone>', 'IANA time zone (default: this machine’s)')
    .option('--after <ids>', 'dependencies (same schedule), comma separated; repeatable (edit: replaces the list)', collect)
    .option('--schedule <name>', 'schedule this routine belongs to')
    .option('--computer <user@HOST>', 'computer that runs it')
    .option('--external', 'started by nobody: it reports over the API')
    .option('--cwd <dir>', 'working directory (default for add: the current one)')
    .option('--env <K=V>', 'environment variable; repeatable (edit: replaces the whole environment)', collect)
    .option('--retry <policy>', '"none" or EVERY/FOR, e.g. 60s/1h')
    .option('--misfire <policy>', 'after downtime or sleep: skip | once | all')
    .option('--overlap <policy>', 'when the previous run is still going: skip | queue-one | allow')
    .option('--timeout <duration>', 'stop a run that takes longer')
    .option('--heartbeat <duration>', 'realtime: restart when silent for longer')
    .option('--grace <duration>', 'realtime: startup grace before silence counts (max 5m)')
    .option('--tolerance <duration>', 'batch: DELAYED when not started this long after due')
    .option('--log-cap <size>', 'per-stream log cap, e.g. 64MiB')
    .option('--output <path>', 'promised output (path or glob); repeatable (edit: replaces the list)', collect)
    .option('--revision <sha>', 'git commit the working tree must be at, clean')
    .option('--json', 'machine-readable output');
}

async function toInput(id: string, o: RoutineFlags, command: string[], partial: boolean): Promise<Record<string, unknown>> {
  const { expandRoutineId } = await import('../../engine/domain/schema.js');
  const input: Record<string, unknown> = { id: expandRoutineId(id) };
  const set = (k: string, v: unknown) => {
    if (v !== undefined) input[k] = v;
  };
  set('cron', o.cron);
  set('runtimes', o.runtimes);
  set('every', o.every);
  set('at', o.at);
  set('in', o.in);
  if (o.realtime) input.realtime = true;
  if (o.batch) input.realtime = false;
  set('name', o.name);
  set('tz', o.tz);
  if (o.after) input.after = o.after.flatMap((a) => a.split(',')).map((s) => s.trim()).filter(Boolean).map((a) => expandRoutineId(a));
  set('schedule', o.schedule);
  set('computer', o.computer);
  if (o.external) input.external = true;
  const cwd = await placeCwd(input.id as string, o, partial);
  if (cwd !== undefined) input.cwd = cwd;
  if (o.env) {
    const env: Record<string, string> = {};
    for (const kv of o.env) {
      const i = kv.indexOf('=');
      if (i <= 0) usage('--env', `expected K=V, got "${kv}"`);
      env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    input.env = env;
  }
  if (o.retry !== undefined) {
    if (o.retry === 'none') input.retry = 'none';
    else {
      const [every, forDur] = o.retry.split('/');
      if (!every || !forDur) usage('--retry', 'expected "none" or EVERY/FOR, e.g. 60s/1h');
      input.retry = { every, for: forDur };
    }
  }
  set('misfire', o.misfire);
  set('overlap', o.overlap);
  set('timeout', o.timeout);
  set('heartbeat', o.heartbeat);
  set('grace', o.grace);
  set('tolerance', o.tolerance);
  set('log_cap', o.logCap);
  set('outputs', o.output);
  set('revision', o.revision);
  applyBackendFlags(o, input, partial);
  if (command.length) {
    input.command = command[0];
    input.args = command.slice(1);
  } else if (!partial && !o.external) {
    usage('command', 'give the command after --, e.g. tend routine add ID --every 5m -- ./backup.sh');
  }
  return input;
}

/**
 * The working directory, as a shell user expects: `--cwd` relative to where tend runs, and without
 * `--cwd` a new routine of this host runs where `routine add` ran (so `-- ./download.sh` is the
 * download.sh beside you). Another host's directory must be given, and absolute.
 */
async function placeCwd(id: string, o: RoutineFlags, partial: boolean): Promise<string | undefined> {
  const [{ isAbsolute, resolve }, { localComputer }] = await Promise.all([import('node:path'), import('../../engine/domain/computer.js')]);
  const computer = o.computer ?? id.slice(0, id.indexOf(':'));
  if (o.cwd !== undefined) {
    if (isAbsolute(o.cwd)) return o.cwd;
    if (!partial && computer !== localComputer()) usage('--cwd', `a relative directory is one of this host; give ${computer}'s directory as an absolute path`);
    return resolve(o.cwd);
  }
  if (partial || o.external || computer !== localComputer()) return undefined;
  return process.cwd();
}

/** The flag that sets each input field, so that a refusal names what the user typed. */
const FLAG_OF: Record<string, string> = {
  cron: '--cron', runtimes: '--runtimes', every: '--every', at: '--at', in: '--in', realtime: '--realtime',
  name: '--name', tz: '--tz', after: '--after', schedule: '--schedule', computer: '--computer', external: '--external',
  cwd: '--cwd', env: '--env', retry: '--retry', misfire: '--misfire', overlap: '--overlap', timeout: '--timeout',
  heartbeat: '--heartbeat', grace: '--grace', tolerance: '--tolerance', log_cap: '--log-cap', outputs: '--output',
  revision: '--revision', args: 'command', ...BACKEND_FLAG_OF,
};

async function nudge(): Promise<boolean> {
  const { nudgeDaemon } = await import('../../engine/daemon/nudge.js');
  return nudgeDaemon(await dataDirPath());
}

async function resolveId(id: string): Promise<string> {
  const { expandRoutineId } = await import('../../engine/domain/schema.js');
  return expandRoutineId(id);
}

export function register(program: Command): void {
  const routine = program.command('routine').description('define and control routines');

  definitionFlags(routine.command('add <id> [command...]').description('define a routine: tend routine add ID --cron "0 7 * * *" -- CMD ARGS'))
    .action(
      action(async (id: string, command: string[], o: RoutineFlags) => {
        const input = await toInput(id, o, command, false);
        const { saveRoutine } = await import('../../engine/ops/routines.js');
        const { publicDef } = await import('../../engine/ops/views.js');
        const def = await withStore((s) => asFlags(FLAG_OF, () => saveRoutine(s, input, { now: Date.now() }, 'create').def));
        await nudge();
        print(o.json, publicDef(def), () => `added ${def.id}`);
      }),
    );

  definitionFlags(routine.command('edit <id> [command...]').description('change a routine: only the flags given change'))
    .action(
      action(async (id: string, command: string[], o: RoutineFlags) => {
        const input = await toInput(id, o, command, true);
        const { editRoutine } = await import('../../engine/ops/routines.js');
        const { publicDef } = await import('../../engine/ops/views.js');
        const fullId = input.id as string;
        delete input.id;
        const def = await withStore((s) => asFlags(FLAG_OF, () => editRoutine(s, fullId, input, { now: Date.now() })));
        await nudge();
        print(o.json, publicDef(def), () => `updated ${def.id}`);
      }),
    );

  routine
    .command('list')
    .description("routines with their trigger state, next run and today's status")
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const { listRoutines } = await import('../../engine/ops/views.js');
        const rows = await withStore((s) => listRoutines(s, Date.now()));
        const { nextText } = await import('../routine-text.js');
        const out = rows.map((r) => ({ id: r.id, name: r.name, schedule: r.schedule, kind: r.kind, trigger: r.trigger, nextRun: r.nextRun, retry: r.retry, today: r.today, computer: r.computer, external: r.external }));
        print(o.json, out, () =>
          rows.length === 0
            ? 'no routines (add one with: tend routine add ID --every 1h -- CMD)'
            : table([['ID', 'KIND', 'SCHEDULE', 'TRIGGER', 'NEXT RUN', 'TODAY'], ...out.map((r) => [r.id, r.kind, r.schedule, r.trigger ?? '-', nextText(r), r.today ?? '-'])]),
        );
      }),
    );

  routine
    .command('show <id>')
    .description('definition (secrets masked), trigger state, next runs and history')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, o: { json?: boolean }) => {
        const { showRoutine } = await import('../../engine/ops/views.js');
        const d = await withStore(async (s) => showRoutine(s, await resolveId(id), Date.now()));
        const { showText } = await import('../routine-text.js');
        const [{ readState }, { isLiveOwner, readPidRecord }, { localComputer }] = await Promise.all([import('../../engine/daemon/state.js'), import('../../engine/daemon/ownership.js'), import('../../engine/domain/computer.js')]);
        // The daemon's backend for it (this host's own, else the worker pool of its computer) and whether it is paused.
        const dir = await dataDirPath();
        const backend = d.definition.computer === localComputer() ? d.definition.backend : `pool:${d.definition.computer}`;
        const paused = isLiveOwner(readPidRecord(dir)) ? (readState(dir)?.pausedBackends?.[backend] ?? null) : null;
        print(o.json, { ...d, backendPaused: paused }, () => showText({ ...d, backendPaused: paused }));
      }),
    );

  routine
    .command('remove <id>')
    .description('delete a definition (its run history stays)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, o: { json?: boolean }) => {
        const { removeRoutine } = await import('../../engine/ops/routines.js');
        const full = await resolveId(id);
        await withStore((s) => removeRoutine(s, full, Date.now()));
        await nudge();
        print(o.json, { id: full, removed: true }, () => `removed ${full}`);
      }),
    );

  for (const verb of ['pause', 'resume', 'clear'] as const) {
    routine
      .command(`${verb} <id>`)
      .description(verb === 'pause' ? 'exclude from due runs' : verb === 'resume' ? 'recompute timing from now and schedule again' : 'drop trigger state and failure metadata; re-arm from now')
      .option('--json', 'machine-readable output')
      .action(
        action(async (id: string, o: { json?: boolean }) => {
          const ops = await import('../../engine/ops/routines.js');
          const full = await resolveId(id);
          const fn = verb === 'pause' ? ops.pauseRoutine : verb === 'resume' ? ops.resumeRoutine : ops.clearRoutine;
          const t = await withStore((s) => fn(s, full, Date.now()));
          await nudge();
          print(o.json, { id: full, trigger: t.state, nextRun: t.nextRunAt === null ? null : new Date(t.nextRunAt).toISOString() }, () => `${full}: ${t.state}`);
        }),
      );
  }
}

/** run / restart / stop: the one-click operations, through the same engine functions as the UI. */
export function registerControl(program: Command): void {
  const routine = program.commands.find((c) => c.name() === 'routine')!;
  const wait = (cmd: Command) =>
    cmd.option('--wait <duration>', 'wait this long for the run to be RUNNING or to end (needs a daemon)', '30s').option('--no-wait', 'return at once').option('--json', 'machine-readable output');

  wait(routine.command('run <id>').description('run now, outside its timing (batch) or start it (realtime)')).action(
    action(async (id: string, o: { wait: string | false; json?: boolean }) => {
      const { withControl } = await import('../control.js');
      const { runNow } = await import('../../engine/ops/control.js');
      const full = await resolveId(id);
      // Bad input is refused before anything is queued or stopped.
      const limit = await waitLimit(o.wait);
      const run = await withControl(async (c) => runNow(c, full));
      const final = await awaitRun(run.id, limit);
      print(o.json, final, () => `${full}: run ${final.id} ${final.status}${final.reason ? ` (${final.reason})` : ''}`);
      if (final.status === 'ERROR') process.exitCode = 1;
    }),
  );

  wait(routine.command('restart <id>').description('stop (TERM, then KILL) then start, as one operation')).action(
    action(async (id: string, o: { wait: string | false; json?: boolean }) => {
      const { withControl } = await import('../control.js');
      const { restartRoutine } = await import('../../engine/ops/control.js');
      const full = await resolveId(id);
      // Bad input is refused before anything is queued or stopped.
      const limit = await waitLimit(o.wait);
      const res = await withControl(async (c) => restartRoutine(c, full));
      const final = await awaitRun(res.started.id, limit);
      print(o.json, { stopped: res.stopped.map((r) => r.id), started: final }, () => `${full}: stopped ${res.stopped.length}, run ${final.id} ${final.status}${final.reason ? ` (${final.reason})` : ''}`);
      if (final.status === 'ERROR') process.exitCode = 1;
    }),
  );

  routine
    .command('stop <id>')
    .description('stop its running instances: TERM to the whole process group, KILL after the grace period')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, o: { json?: boolean }) => {
        const { withControl } = await import('../control.js');
        const { stopRoutine } = await import('../../engine/ops/control.js');
        const full = await resolveId(id);
        const stopped = await withControl(async (c) => stopRoutine(c, full));
        print(o.json, { id: full, stopped: stopped.map((r) => ({ id: r.id, status: r.status })) }, () => (stopped.length ? `${full}: stopped ${stopped.map((r) => r.id).join(', ')}` : `${full}: nothing was running`));
      }),
    );
}

/** `--wait D` in ms, or false for `--no-wait`; exit 2 on a bad duration. */
async function waitLimit(waitFor: string | false): Promise<number | false> {
  if (waitFor === false) return false;
  const { parseDuration } = await import('../../engine/timing/duration.js');
  try {
    return parseDuration(waitFor);
  } catch (err) {
    usage('--wait', `duration ${(err as Error).message}`);
  }
}

/** Wait until the run is RUNNING or has ended, or the wait runs out; reports where it got to. */
async function awaitRun(runId: string, limit: number | false) {
  const { runSummary } = await import('../../engine/ops/views.js');
  const { ownerPid } = await import('../../engine/daemon/nudge.js');
  const get = () => withStore((s) => s.runs.get(runId)!);
  let run = await get();
  const daemon = ownerPid(await dataDirPath()) !== null;
  if (limit === false) return { ...runSummary(run), daemon };
  if (!daemon) {
    process.stderr.write('tend: no daemon owns the data dir: the run is queued and starts when one does (tend daemon ensure)\n');
    return { ...runSummary(run), daemon };
  }
  const deadline = Date.now() + limit;
  const settled = ['RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED'];
  while (!settled.includes(run.status) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    run = await get();
  }
  return { ...runSummary(run), daemon };
}
