// Standbys (issue 14, per restart): after a realtime run is launched, the local backend starts a
// waiter for the routine's next instance ahead of time, and that instance starts from it — real
// processes, real job directories. What the daemon's death does to one is in
// local-backend-survival.test.ts.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../main/engine/backend.js';
import { createLocalBackend, readManifest, type LocalBackend } from '../../../worker/local/index.js';
import { isSameProcessAlive, readProcStat } from '../../../worker/jobdir/proc.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';
import { readPidRecord, type PidRecord } from '../../../worker/jobdir/jobdir.js';
import { suiteTools } from '../../helpers/waiter-tools.js';
import { makeSpec, settle, stopAll, tempDir } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;
let routine: string;
let stops: string;
const exits: string[] = [];

beforeAll(() => {
  data = tempDir('tend-standby-');
  backend = createLocalBackend({ dataDir: data.path, tendVersion: '0.1.0-test', tools: suiteTools, onExit: (id) => exits.push(id) });
  // Says who it is, then runs until `<stops>/<its run id>` exists, and exits 3.
  routine = join(data.path, 'routine.sh');
  writeFileSync(
    routine,
    `#!/bin/sh
echo "run $TEND_RUN_ID attempt $TEND_ATTEMPT dir $TEND_RUN_DIR at $TEND_SCHEDULED_AT of $TEND_ROUTINE in $(pwd)"
echo "to stderr" >&2
while [ ! -e "$1/$TEND_RUN_ID" ]; do sleep 0.05; done
exit 3
`,
  );
  chmodSync(routine, 0o755);
  stops = join(data.path, 'stops');
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

let n = 0;
function realtimeSpec(over: Partial<JobSpec> = {}): JobSpec {
  n++;
  return makeSpec(data.path, { command: routine, args: [stops], cwd: data.path, realtime: true, routineId: `tester@HOST:standby-${n}`, ...over });
}

/** Let the run end on its own (its stop file). */
function end(spec: JobSpec): void {
  mkdirSync(stops, { recursive: true });
  writeFileSync(join(stops, spec.runId), '');
}

const standbyRoot = () => join(data.path, 'standby');
/** Alive as the OS says (procfs: cheap, where the ps provider would cost a process per look). */
const running = (pid: number) => {
  const st = readProcStat(pid, procfsTable());
  return st !== null && st.state !== 'Z';
};
const alive = (r: PidRecord) => running(r.wrapperPid) || running(r.pid);

/** The standbys waiting now (their pair recorded and alive), not counting `known`. */
function newStandby(known: Set<number>): Promise<PidRecord> {
  return waitFor(() => {
    if (!existsSync(standbyRoot())) return null;
    for (const name of readdirSync(standbyRoot())) {
      const rec = readPidRecord(join(standbyRoot(), name));
      if (rec && !known.has(rec.wrapperPid) && alive(rec)) return rec;
    }
    return null;
  }, 10_000, 'a standby to be ready', 50);
}

const seen = new Set<number>();
// A failed test must not leave its standby to the next (each test looks for new ones).
afterEach(() => {
  if (!existsSync(standbyRoot())) return;
  for (const name of readdirSync(standbyRoot())) {
    const rec = readPidRecord(join(standbyRoot(), name));
    if (!rec) continue;
    for (const [pid, start] of [[rec.pid, rec.startTime], [rec.wrapperPid, rec.wrapperStartTime]] as const) {
      // Only the very process recorded (its number may have been reused since).
      if (start !== null && isSameProcessAlive(pid, start)) process.kill(pid, 'SIGKILL');
    }
  }
});
async function launchWithStandby(spec: JobSpec) {
  const handle = await backend.submit(spec);
  const standby = await newStandby(seen);
  seen.add(standby.wrapperPid);
  return { handle, standby };
}

describe('standbys', () => {
  it("a realtime routine's next instance starts from the standby started after the last one, in its own session, as that run", async () => {
    const first = realtimeSpec();
    const { handle: h1, standby } = await launchWithStandby(first);
    expect(h1['wrapperPid']).not.toBe(standby.wrapperPid);
    end(first);
    expect(await settle(backend, h1)).toMatchObject({ exitCode: 3 });

    const second = realtimeSpec({ routineId: first.routineId });
    const before = Date.now();
    const h2 = await backend.submit(second);
    // The standby's pair is the run's wrapper and routine.
    expect(h2).toMatchObject({ wrapperPid: standby.wrapperPid, wrapperStartTime: standby.wrapperStartTime, pid: standby.pid, startTime: standby.startTime });
    const out = await waitFor(() => backend.tailLog(second.runDir, 'stdout', 1000), 10_000, 'its first line');
    expect(out).toBe(`run ${second.runId} attempt 1 dir ${second.runDir} at ${new Date(second.scheduledAt).toISOString()} of ${second.routineId} in ${data.path}\n`);
    expect(backend.tailLog(second.runDir, 'stderr', 1000)).toBe('to stderr\n');
    // Owner-only, whatever umask the routine runs with.
    for (const f of ['stdout.log', 'stderr.log', 'launched', 'pid.json', 'manifest.json']) expect(statSync(join(second.runDir, f)).mode & 0o077).toBe(0);
    const stat = readProcStat(standby.pid, procfsTable());
    expect(stat).toMatchObject({ sid: standby.pid, pgid: standby.pid });
    expect(readFileSync(join(second.runDir, 'launched'), 'utf8')).toMatch(new RegExp(`^${standby.wrapperPid} \\S`));
    expect(readPidRecord(second.runDir)).toEqual(standby);
    // Its start is the go, not when it was parked: quick deaths are timed from it.
    expect(readManifest(second.runDir)?.startedAt).toBeGreaterThanOrEqual(before);
    expect((await backend.poll([h2]))[0]).toMatchObject({ state: 'running' });
    expect(exits).not.toContain(second.runId);

    // Its waiter settles it as run.sh would, and a standby for the instance after it is started.
    const third = await newStandby(seen);
    seen.add(third.wrapperPid);
    end(second);
    expect(await settle(backend, h2)).toMatchObject({ exitCode: 3, signal: null, reason: null });
    expect(readFileSync(join(second.runDir, 'exit_code'), 'utf8')).toBe('3\n');
    // Its waiter's exit is reported once (heard both as its pipe's end and from the helper).
    await waitFor(() => exits.includes(second.runId), 10_000, 'the exit to be reported');
    expect(exits.filter((id) => id === second.runId)).toEqual([second.runId]);
    await backend.cancel(h2, 200);
    await waitFor(() => !alive(third), 10_000, 'the next standby to leave with the run it followed stopped');
  });

  it('a standby serves only the definition it was started for: another one starts the ordinary way, and the standby leaves', async () => {
    const first = realtimeSpec();
    const { handle: h1, standby } = await launchWithStandby(first);
    end(first);
    await settle(backend, h1);
    const changed = realtimeSpec({ routineId: first.routineId, env: { MODE: 'new' } });
    const h2 = await backend.submit(changed);
    expect(h2['wrapperPid']).not.toBe(standby.wrapperPid);
    expect(h2['pid']).not.toBe(standby.pid);
    await waitFor(() => !alive(standby), 10_000, 'the unfit standby to leave');
    await backend.cancel(h2, 200);
  });

  it('stopping the run a standby follows lets the standby go, and nothing of it runs', async () => {
    const first = realtimeSpec();
    const { handle, standby } = await launchWithStandby(first);
    await backend.cancel(handle, 200);
    await waitFor(() => !alive(standby), 10_000, 'the standby to leave');
    const dir = readdirSync(standbyRoot()).map((d) => join(standbyRoot(), d));
    await waitFor(() => dir.every((d) => readPidRecord(d)?.wrapperPid !== standby.wrapperPid), 10_000, "the standby's directory to be removed");
  });

  it("a realtime run's end is heard through its waiter's pipe, even with the spawn helper gone", async () => {
    const spec = realtimeSpec();
    const { handle } = await launchWithStandby(spec);
    // The helper is the waiter's parent; killed, its report of the exit never comes.
    const helper = readProcStat(handle['wrapperPid'] as number, procfsTable())!.ppid;
    process.kill(helper, 'SIGKILL');
    await waitFor(() => !running(helper), 10_000, 'the helper to be gone');
    expect(exits).not.toContain(spec.runId);
    end(spec);
    await waitFor(() => exits.includes(spec.runId), 10_000, 'the end to be heard');
    expect(await settle(backend, handle)).toMatchObject({ exitCode: 3 });
  });

  it('batch runs get no standby', async () => {
    const batch = makeSpec(data.path, { command: routine, args: [stops], cwd: data.path, routineId: 'tester@HOST:standby-batch' });
    const hb = await backend.submit(batch);
    // A standby is asked for a moment after its launch, in launch order: one for the batch run
    // would exist by the time the realtime run's does.
    const realtime = realtimeSpec();
    const { handle: hr, standby } = await launchWithStandby(realtime);
    const waiting = readdirSync(standbyRoot()).map((d) => readPidRecord(join(standbyRoot(), d))).filter((r) => r !== null && alive(r));
    expect(waiting).toEqual([standby]);
    end(batch);
    await settle(backend, hb);
    await backend.cancel(hr, 200);
  });
});
