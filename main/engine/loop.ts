// A small self-rescheduling loop: tick / nudge / stop, never two passes at once. It never sleeps
// longer than the interval (capped at 30 s) before looking again, so suspend and clock jumps are seen.
// Long work (the history retention) runs between passes a slice at a time: a nudge, a stop or the
// next pass's time is seen after each slice, so a pass never waits for more than one, and every
// pass is followed by one at least, so the work gets done however often passes are asked for.
//
// Passes asked for while work flows are gathered (issue 14: 300 no-op jobs drained by a daemon
// ran about 1.2 passes a job, each settling one exit or looking at one launch): a nudged pass
// starts once the event loop's turn is over (setImmediate), so the exits heard in the same turn
// are settled by one pass; a pass asked for with `nudgeWithin` waits that long at most for one
// that comes anyway (a recorded launch is looked at by the next pass, not by a pass of its own).
// Holding nudged passes back a few milliseconds more (tried: 1 and 3 ms) gathered no more.

export interface LoopOptions {
  intervalMs: number;
  pass: () => Promise<unknown>;
  /** One slice of the work between passes; true while more is pending now. */
  between?: () => Promise<boolean>;
  onError?: (err: unknown) => void;
}

const MAX_SLEEP_MS = 30_000;

export class Loop {
  private stopped = true;
  /** When the next pass is asked for (now(): a nudge at once, later: within a bound), Infinity: not asked. */
  private asked = Infinity;
  private wake: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly o: LoopOptions) {}

  private now(): number {
    return performance.now();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.done = this.run();
  }

  /** Run a pass as soon as the current one (if any) ends. */
  nudge(): void {
    this.ask(0);
  }

  /** Run a pass within `ms`: sooner if one is due or asked for sooner anyway. */
  nudgeWithin(ms: number): void {
    this.ask(Math.max(0, ms));
  }

  /** Resolves once the current pass has finished; no pass starts after. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.done;
  }

  get running(): boolean {
    return !this.stopped;
  }

  private ask(ms: number): void {
    const at = this.now() + ms;
    if (at >= this.asked) return;
    this.asked = at;
    // A sleeping loop looks at its time again.
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.asked = Infinity;
      try {
        await this.o.pass();
      } catch (err) {
        this.o.onError?.(err);
      }
      if (this.stopped) break;
      const nextAt = this.now() + Math.min(this.o.intervalMs, MAX_SLEEP_MS);
      await this.slices(nextAt);
      // Until the pass is due or asked for (a nudge, or the bound of a nudgeWithin).
      while (!this.stopped) {
        const wait = Math.min(nextAt, this.asked) - this.now();
        if (wait <= 0) break;
        await this.sleep(wait);
      }
      // The rest of this turn first: exits heard in it are settled by the same pass.
      if (!this.stopped) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Slices of the work between passes until it is done, or a pass is asked for or due; one at
   * least after every pass, so a loop nudged without pause still gets through it.
   */
  private async slices(nextAt: number): Promise<void> {
    if (!this.o.between) return;
    for (let first = true; !this.stopped && (first || this.now() < Math.min(nextAt, this.asked)); first = false) {
      try {
        if (!(await this.o.between())) return;
      } catch (err) {
        this.o.onError?.(err);
        return;
      }
    }
  }

  /** Until `ms` have passed, or a nudge or a stop wakes it. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }
}
