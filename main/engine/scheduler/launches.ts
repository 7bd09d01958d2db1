// What this process has set going and not seen through yet: launches not yet recorded in the
// ledger, and cancels between TERM and KILL. Both hold on past the pass that started them, and
// a stop waits for both.

/** A launch in flight: claimed (its lease held), submitted, not yet recorded in the ledger. */
export interface Launch {
  done: Promise<void>;
  queue: 'run' | 'job';
  schedule: string | null;
}

export class Launches {
  /** Launches in flight (`launchInBackground`), by `<queue>:<id>`: they hold slots. */
  readonly launching = new Map<string, Launch>();
  /** Cancels in progress, by run id, so a pass never awaits a kill grace period. */
  readonly stopping = new Map<string, Promise<void>>();

  /** `onLaunched`: called once background launches are recorded (the Engine nudges a pass). */
  constructor(readonly onLaunched: () => void = () => {}) {}

  private answered: { items: unknown[]; written: Promise<void> } | null = null;

  /**
   * `item` written by `write` with the others gathered in the same turn of the event loop, once
   * that turn is over (setImmediate); resolves once written. What `write` throws is reported, never
   * thrown from the immediate (which would end the process).
   */
  gather<T>(item: T, write: (items: T[]) => void): Promise<void> {
    if (!this.answered) {
      const items: T[] = [];
      this.answered = {
        items,
        written: new Promise((resolve) =>
          setImmediate(() => {
            this.answered = null;
            try {
              write(items);
            } catch (err) {
              process.stderr.write(`tend: recording launches failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
            } finally {
              resolve();
            }
          }),
        ),
      };
    }
    this.answered.items.push(item);
    return this.answered.written;
  }
}
