// V8 settings of the headless daemon, set from inside it as `tend daemon run` starts (the CLI's
// first import, main/cli/daemon-v8.ts), so every way it is started gets them: a shell, `tend
// daemon ensure`, the systemd unit or LaunchAgent, the packaged CLI, the tests' harness. A
// resident scheduler idles, and its pass is SQLite and process calls more than JavaScript, so
// V8's defaults cost it memory it never earns back (Node 20, idle daemon with 100 routines, bench
// `idle`: median 77 → 64 MiB, settled 70 → 63):
// - No optimizing compiler (TurboFan; Maglev where a newer V8 has it on). One optimized function
//   is enough to bring the compiler's code into memory (some 4 MiB of the node binary) beside
//   the optimized code and the compiler's zones, for good. Bench `pass` run under this flag:
//   CPU per pass within noise, +12 % with 10,000 routines of which 2,000 are running; bulk
//   JavaScript such as a schedule import of 10,000 routines is slower.
// - While it starts, the young generation stays at its first 1 MiB semi-space: start-up's garbage
//   grew it to 8 MiB, held until V8's memory reducer ran 10-25 s later. From the first pass on
//   it grows as V8 likes: held small under a busy pass, scavenges cost that pass half its CPU again.
//   A newer V8 (Electron's runtime, for the packaged CLI) raises a factor below 2 to 2: there
//   only the compiler flags take effect.
// These flags are read when used, so setting them at run time works (unlike --max-semi-space-size,
// fixed when the heap is made); test/daemon/v8-flags.test.ts checks their effect in a real daemon.
import { setFlagsFromString } from 'node:v8';

/** Also what bench `pass` starts its daemon-flags child with, so its figure is the daemon's. */
export const NO_OPTIMIZING_COMPILER = ['--no-turbofan', '--no-maglev'];
const GROWTH_WHILE_STARTING = '--semi-space-growth-factor=1';
/** V8's default, given back once the daemon has started. */
const GROWTH_ONCE_STARTED = '--semi-space-growth-factor=2';

let applied = false;

export function applyDaemonV8Flags(): void {
  for (const flag of [...NO_OPTIMIZING_COMPILER, GROWTH_WHILE_STARTING]) setFlagsFromString(flag);
  applied = true;
}

/** The daemon has started (its first pass is done): its young generation may grow under load. */
export function daemonStarted(): void {
  if (applied) setFlagsFromString(GROWTH_ONCE_STARTED);
}
