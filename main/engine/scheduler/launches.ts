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

  /** `onLaunched`: called once a background launch is recorded (the Engine nudges a pass). */
  constructor(readonly onLaunched: (() => void) | null = null) {}
}
