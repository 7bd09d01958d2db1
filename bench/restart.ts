// The gap from a realtime routine's death to its new process: a real Engine (pass interval 1 s,
// so the restart rests on the exit nudge), the local backend, real processes. Each of ~20
// routines starts, dies 150 ms later (a first quick death: restarted at once, no backoff), and its
// next instance notes when it began; the routine stamps both instants itself ($EPOCHREALTIME).
// Next to it, in the same run, a bare supervisor: child_process.spawn again on 'exit'. The local
// backend starts each new instance from a standby waiter prepared after the last launch
// (worker/local/standby.ts): restartsFromStandby says how many did.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Engine } from '../main/engine/engine.js';
import { buildEngine } from '../main/engine/host/build-engine.js';
import { saveRoutine } from '../main/engine/ops/routines.js';
import { median, percentile, round } from './stats.js';
import { pm2Bin, startPm2, type Pm2 } from './pm2.js';

const COMPUTER = 'bench@host';

// The first instance dies after 150 ms; the ones after it live until stopped.
const LIFE = `#!/usr/bin/env bash
if [ -e "$1.died" ]; then
  echo "start $EPOCHREALTIME" >> "$1"
  exec sleep 3600
fi
echo "start $EPOCHREALTIME" >> "$1"
sleep 0.15
: > "$1.died"
echo "die $EPOCHREALTIME" >> "$1"
exit 1
`;

/** ms from the "die" stamp to the next "start" stamp, once both are there. */
async function gapOf(file: string, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(file)) {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      const die = lines.findIndex((l) => l.startsWith('die '));
      const next = die >= 0 ? lines.slice(die + 1).find((l) => l.startsWith('start ')) : undefined;
      if (die >= 0 && next) return (Number(next.split(' ')[1]) - Number(lines[die]!.split(' ')[1])) * 1000;
    }
    if (Date.now() > deadline) throw new Error(`no restart recorded in ${file}`);
    await delay(5);
  }
}

/**
 * The engine's restart of routine `i` (defined now, dies once, restarted; then stopped), and
 * whether the new instance came from a standby (its job dir has no run.sh of its own).
 */
async function engineGap(engine: Engine, i: number, dir: string, script: string): Promise<{ gap: number; fromStandby: boolean }> {
  const stamps = join(dir, `engine-${i}`);
  const id = `${COMPUTER}:bench/restart-${i}`;
  saveRoutine(engine.store, { id, realtime: true, command: script, args: [stamps], tz: 'UTC' }, { now: Date.now(), localComputer: COMPUTER });
  engine.nudge();
  const gap = await gapOf(stamps);
  const runDir = engine.store.runs.latest(id)?.runDir ?? null;
  await engine.stopRoutine(id);
  return { gap, fromStandby: runDir !== null && existsSync(runDir) && !existsSync(join(runDir, 'run.sh')) };
}

/** The floor: a supervisor that does nothing but spawn the program again when it exits. */
async function bareGap(i: number, dir: string, script: string): Promise<number> {
  const stamps = join(dir, `bare-${i}`);
  let current = spawn(script, [stamps], { stdio: 'ignore' });
  current.once('exit', () => {
    current = spawn(script, [stamps], { stdio: 'ignore' });
  });
  const gap = await gapOf(stamps);
  current.kill('SIGKILL');
  return gap;
}

/** pm2 supervising the same script (autorestart, no delay). */
async function pm2Gap(pm2: Pm2, i: number, dir: string, script: string): Promise<number> {
  const stamps = join(dir, `pm2-${i}`);
  pm2.run(['start', script, '--name', `r${i}`, '--restart-delay', '0', '--interpreter', 'none', '--', stamps]);
  const gap = await gapOf(stamps);
  pm2.run(['delete', `r${i}`]);
  return gap;
}

export async function benchRestart() {
  const n = Number(process.env.TEND_BENCH_RESTARTS ?? 20);
  const dir = mkdtempSync(join(os.tmpdir(), 'tend-bench-restart-'));
  try {
    const script = join(dir, 'life.sh');
    writeFileSync(script, LIFE);
    chmodSync(script, 0o755);
    // Interleaved, one death each in turn, so a change in the machine's load hits both alike.
    const bare: number[] = [];
    const engine: number[] = [];
    let fromStandby = 0;
    const viaPm2: number[] = [];
    const bin = pm2Bin();
    const pm2 = bin ? startPm2(bin) : null;
    const host = buildEngine({ dataDir: join(dir, 'data'), intervalMs: 1000, options: { computer: COMPUTER, killGraceMs: 1000 } });
    host.start();
    try {
      for (let i = 0; i < n; i++) {
        bare.push(await bareGap(i, dir, script));
        const e = await engineGap(host, i, dir, script);
        engine.push(e.gap);
        if (e.fromStandby) fromStandby++;
        if (pm2) viaPm2.push(await pm2Gap(pm2, i, dir, script));
      }
    } finally {
      await host.close();
      pm2?.close();
    }
    const pm2Median = viaPm2.length ? median(viaPm2) : null;
    return {
      name: 'restart',
      description: `gap from a realtime routine's death to its new process (first quick death: restarted at once), over ${n} deaths; engine with a 1 s pass interval (the exit nudge drives the restart), next to a bare spawn-on-exit supervisor, interleaved`,
      deaths: n,
      engine: { medianMs: round(median(engine), 1), p90Ms: round(percentile(engine, 90), 1), minMs: round(Math.min(...engine), 1), restartsFromStandby: fromStandby },
      bareSupervisor: { medianMs: round(median(bare), 1), p90Ms: round(percentile(bare, 90), 1) },
      pm2: pm2Median === null ? 'not installable here' : { version: '7.0.4', medianMs: round(pm2Median, 1), p90Ms: round(percentile(viaPm2, 90), 1) },
      ratioToPm2: pm2Median === null ? null : round(median(engine) / pm2Median, 2),
      loadAverage1m: round(os.loadavg()[0]!, 2),
      cpus: os.cpus().length,
      targets: { ratioToPm2: 1 },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
