// The signals an owner of a data dir answers, installed before it claims the data dir: `tend`
// commands nudge the owner named in daemon.pid with SIGUSR2 as soon as that file exists, and
// SIGUSR2's default action is to kill. TERM, INT and HUP ask for a clean stop, which releases the
// claim, whether they come during startup or after.

export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

export interface OwnerSignals {
  /** Where nudges go once there is an engine; before that they are dropped (the first pass comes anyway). */
  onNudge(fn: () => void): void;
  /** Resolves with the first stop signal. */
  readonly stop: Promise<StopSignal>;
  /** Aborted by the first stop signal (with it as the reason). */
  readonly signal: AbortSignal;
  dispose(): void;
}

export function installOwnerSignals(): OwnerSignals {
  let nudge: (() => void) | null = null;
  const ctl = new AbortController();
  let resolveStop!: (s: StopSignal) => void;
  const stop = new Promise<StopSignal>((r) => (resolveStop = r));
  const onNudge = () => nudge?.();
  const stoppers = (['SIGTERM', 'SIGINT', 'SIGHUP'] as const).map((sig) => {
    const fn = () => {
      if (ctl.signal.aborted) return;
      ctl.abort(sig);
      resolveStop(sig);
    };
    process.on(sig, fn);
    return [sig, fn] as const;
  });
  const posix = process.platform !== 'win32';
  if (posix) process.on('SIGUSR2', onNudge);
  return {
    onNudge: (fn) => void (nudge = fn),
    stop,
    signal: ctl.signal,
    dispose() {
      if (posix) process.off('SIGUSR2', onNudge);
      for (const [sig, fn] of stoppers) process.off(sig, fn);
    },
  };
}
