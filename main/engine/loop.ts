// A small self-rescheduling loop: tick / nudge / stop, never two passes at once. It never sleeps
// longer than the interval (capped at 30 s) before looking again, so suspend and clock jumps are seen.
// Long work (the history retention) runs between passes a slice at a time: a nudge, a stop or the
// next pass's time is seen after each slice, so a pass never waits for more than one, and every
// pass is followed by one at least, so the work gets done however often passes are asked for.

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
  private nudged = false;
  private wake: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly o: LoopOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.done = this.run();
  }

  /** Run a pass as soon as the current one (if any) ends. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
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

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.nudged = false;
      try {
        await this.o.pass();
      } catch (err) {
        this.o.onError?.(err);
      }
      if (this.stopped) break;
      const nextAt = performance.now() + Math.min(this.o.intervalMs, MAX_SLEEP_MS);
      await this.slices(nextAt);
      if (this.stopped) break;
      if (!this.nudged) await this.sleep(Math.max(0, nextAt - performance.now()));
    }
  }

  /**
   * Slices of the work between passes until it is done, or a pass is asked for or due; one at
   * least after every pass, so a loop nudged without pause still gets through it.
   */
  private async slices(nextAt: number): Promise<void> {
    if (!this.o.between) return;
    for (let first = true; !this.stopped && (first || (!this.nudged && performance.now() < nextAt)); first = false) {
      try {
        if (!(await this.o.between())) return;
      } catch (err) {
        this.o.onError?.(err);
        return;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        finish();
      };
    });
  }
}
