// Standbys: for each realtime routine this backend runs, one waiter started ahead of time
// (standby-script.ts), so that its next instance is a message to a waiting process rather than a
// waiter's start. A standby serves only the routine and definition it was started for (command,
// arguments, working directory, environment, shell); anything else, and it is let go.
//
// A standby is started only through the spawn helper, whose pipe is its lifeline: it dies with the
// daemon (see standby-script.ts). It is let go when its routine's run is cancelled, when that run
// ended and no restart took it within LINGER_MS (a crash loop, a backoff), or when it no longer
// matches. Its directory, `<data dir>/standby/<daemon pid>-<n>/`, is removed once its waiter exits.
import { existsSync, mkdirSync, readdirSync, rm, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import type { JobSpec } from '../../main/engine/backend.js';
import { jobPath, readPidRecord, readSentinel, type PidRecord } from '../jobdir/jobdir.js';
import { isSameProcessAlive, processProvider } from '../jobdir/proc.js';
import { inheritedEnv } from '../inherited-env.js';
import { standbyHelper } from './spawner.js';
import { standbyScript } from './standby-script.js';
import { jobShell, setsidArgv, type WaiterTools } from './tools.js';

/** How long a standby waits for a restart once the run it follows has ended. */
export const LINGER_MS = 10_000;
/** A standby is started this long after its routine's instance, not while that one starts up. */
export const PREPARE_DELAY_MS = 50;

export interface Standby {
  /** The helper's id for it (go, exit). */
  id: number;
  routineId: string;
  match: string;
  dir: string;
  /** The run it was started after. */
  follows: string;
  /** The write end of its pipe, held here alone (once the helper passed it on). */
  stdin: Socket | null;
  exited: boolean;
  timer: NodeJS.Timeout | null;
}

export interface StandbyOptions {
  dataDir: string;
  tools?: WaiterTools | undefined;
  killGraceMs?: number | undefined;
}

/** What a standby must have been started with to serve `spec`. */
export function matchOf(spec: JobSpec, tools: WaiterTools = {}): string {
  return JSON.stringify([spec.command, spec.args, spec.cwd ?? null, spec.env, tools.shell ?? null, tools.perlSetsid ?? false]);
}

/** `onEnd` once every other copy of the pipe is closed (its waiter, the last holder, exited). */
export function hearEnd(pipe: Socket, onEnd: () => void): void {
  pipe.on('error', () => undefined);
  pipe.unref();
  pipe.once('close', onEnd);
  pipe.resume();
}

export class Standbys {
  private readonly byRoutine = new Map<string, Standby>();
  private readonly root: string;
  private n = 0;
  private swept = false;

  constructor(private readonly o: StandbyOptions) {
    this.root = join(o.dataDir, 'standby');
  }

  /** The standby for `spec`'s routine, taken out of the pool; null if none fits (one that does not is let go). */
  take(spec: JobSpec): { standby: Standby; ready: PidRecord } | null {
    const routineId = spec.routineId;
    if (routineId === null) return null;
    const s = this.byRoutine.get(routineId);
    if (!s) return null;
    this.forget(s);
    const ready = s.exited || s.stdin === null || s.match !== matchOf(spec, this.o.tools) ? null : readPidRecord(s.dir);
    // Its pair must still be the one it recorded (pid reuse, or killed by someone).
    if (!ready || !isSameProcessAlive(ready.pid, ready.startTime) || !isSameProcessAlive(ready.wrapperPid, ready.wrapperStartTime)) {
      this.dismiss(s);
      return null;
    }
    return { standby: s, ready };
  }

  /** Start a standby for the instance after `spec`'s (a realtime run just launched), shortly. */
  prepareAfter(spec: JobSpec): void {
    if (spec.routineId === null || standbyHelper(this.o.tools?.spawner ?? true) === null) return;
    const timer = setTimeout(() => this.prepare(spec), PREPARE_DELAY_MS);
    timer.unref();
  }

  /** The run a standby follows has ended: if no restart takes it soon, it is let go. */
  followedEnded(runId: string): void {
    for (const s of this.byRoutine.values()) {
      if (s.follows !== runId || s.timer) continue;
      s.timer = setTimeout(() => {
        if (this.byRoutine.get(s.routineId) === s) this.letGo(s);
      }, LINGER_MS);
      s.timer.unref();
    }
  }

  /** The run a standby follows is being stopped (by hand, removed, moved): nothing is to restart from it. */
  cancelled(runId: string): void {
    for (const s of this.byRoutine.values()) {
      if (s.follows === runId) this.letGo(s);
    }
  }

  private prepare(spec: JobSpec): void {
    const helper = standbyHelper(this.o.tools?.spawner ?? true);
    const routineId = spec.routineId;
    if (!helper || routineId === null) return;
    const old = this.byRoutine.get(routineId);
    if (old) this.letGo(old);
    // Over or being stopped already: there is no instance to follow.
    if (existsSync(jobPath(spec.runDir, 'cancel')) || readSentinel(spec.runDir)) return;
    let dir: string;
    let shell: string[];
    let file: string;
    try {
      this.sweep();
      shell = jobShell(this.o.tools?.shell);
      const setsid = setsidArgv(this.o.tools?.perlSetsid);
      if (!setsid) return;
      dir = join(this.root, `${process.pid}-${++this.n}`);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      file = join(dir, 'standby.sh');
      const cwd = spec.cwd ?? dir;
      writeFileSync(file, standbyScript({ standbyDir: dir, cwd, provider: processProvider().name, setsid, shell, leftoverGraceMs: this.o.killGraceMs }), { mode: 0o700 });
    } catch {
      return; // no standby: the next instance starts the ordinary way
    }
    // TEND_RUN_ID, TEND_RUN_DIR, TEND_ATTEMPT and TEND_SCHEDULED_AT come with the go message.
    const env = { ...inheritedEnv(), ...spec.env, TEND_ROUTINE: routineId };
    const s: Standby = { id: 0, routineId, match: matchOf(spec, this.o.tools), dir, follows: spec.runId, stdin: null, exited: false, timer: null };
    const started = helper.launchPiped({ file: shell[0] as string, args: [...shell.slice(1), file, spec.command, ...spec.args], cwd: dir, env, log: join(dir, 'wrapper.log') }, () => this.exitedUnused(s));
    s.id = started.id;
    this.byRoutine.set(routineId, s);
    started.started.then(
      ({ stdin }) => {
        // No pipe passed (the helper could not send it, and closed its copy): it leaves by itself.
        if (!stdin) return;
        // Its reader gone, a write fails with EPIPE: that is its exit, heard elsewhere.
        stdin.on('error', () => undefined);
        // Held, not waited on: it keeps no process alive (at exit the pipe closes, and the standby leaves).
        stdin.unref();
        if (s.exited || this.byRoutine.get(routineId) !== s) stdin.destroy();
        else s.stdin = stdin;
      },
      () => this.exitedUnused(s),
    );
  }

  /**
   * Give a taken standby its run; false if its pipe would not take the message (it is gone).
   * `onEnd`: the pipe's end of file, once the waiter (its last holder) has exited.
   */
  go(s: Standby, text: string, onEnd: () => void): Promise<boolean> {
    const stdin = s.stdin;
    s.stdin = null;
    if (!stdin || stdin.destroyed) return Promise.resolve(false);
    hearEnd(stdin, onEnd);
    return new Promise((resolve) => stdin.end(text, (err?: Error | null) => resolve(!err)));
  }

  /** A standby's waiter exited before it was given a run (or could not start). */
  private exitedUnused(s: Standby): void {
    s.exited = true;
    if (this.byRoutine.get(s.routineId) === s) this.forget(s);
    rm(s.dir, { recursive: true, force: true }, () => undefined); // fs's callback: no node:fs/promises resident for it
  }

  private forget(s: Standby): void {
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
    if (this.byRoutine.get(s.routineId) === s) this.byRoutine.delete(s.routineId);
  }

  /** Out of the pool, and let go. */
  private letGo(s: Standby): void {
    this.forget(s);
    this.dismiss(s);
  }

  /** Let it go: end of file on its pipe, and it exits (its exit removes its directory). */
  dismiss(s: Standby): void {
    s.stdin?.destroy();
    s.stdin = null;
  }

  /** Directories of standbys of an earlier daemon (each died with it), once per process. */
  private sweep(): void {
    if (this.swept) return;
    this.swept = true;
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return;
    }
    for (const name of names) {
      const dir = join(this.root, name);
      const rec = readPidRecord(dir);
      if (rec && (isSameProcessAlive(rec.wrapperPid, rec.wrapperStartTime) || isSameProcessAlive(rec.pid, rec.startTime))) continue;
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // tried again by the next daemon
      }
    }
  }
}
