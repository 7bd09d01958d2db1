// Long polls wait here instead of on a timer: a command queued for a computer, or a batch job
// becoming PENDING, answers the waiting worker at once.

export class Wake {
  private commands = new Map<string, Set<() => void>>();
  private jobs = new Set<() => void>();
  private closedFlag = false;

  /** The server is closing: waits return at once. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Answer every waiting long poll now, and every later one at once (the server is closing). */
  close(): void {
    this.closedFlag = true;
    this.jobsAvailable();
    // Deleting the entry being visited is safe while iterating a Map.
    for (const computer of this.commands.keys()) this.commandsFor(computer);
  }

  commandsFor(computer: string): void {
    const set = this.commands.get(computer);
    if (!set) return;
    this.commands.delete(computer);
    for (const fn of set) fn();
  }

  jobsAvailable(): void {
    const all = [...this.jobs];
    this.jobs.clear();
    for (const fn of all) fn();
  }

  /** Resolves on a wake-up, after `ms`, or when `signal` aborts — whichever comes first. */
  wait(kind: 'commands' | 'jobs', computer: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.closedFlag) return Promise.resolve();
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        if (kind === 'jobs') this.jobs.delete(finish);
        else this.commands.get(computer)?.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      signal?.addEventListener('abort', finish);
      if (kind === 'jobs') this.jobs.add(finish);
      else {
        let set = this.commands.get(computer);
        if (!set) this.commands.set(computer, (set = new Set()));
        set.add(finish);
      }
    });
  }
}
