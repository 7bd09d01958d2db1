// Long-lived responses (server-sent events): told when the API wrote something, and ended when
// the server closes, so stopping the daemon never waits for a browser tab to go away.

export class Streams {
  private readonly open = new Map<() => void, (() => void) | null>();

  /** Register a stream: `end` ends its response, `changed` (optional) hears of new rows. Returns the unregister. */
  add(end: () => void, changed: (() => void) | null = null): () => void {
    this.open.set(end, changed);
    return () => {
      this.open.delete(end);
    };
  }

  /** Rows were written (an API call): event streams read them now instead of at the next poll. */
  changed(): void {
    for (const f of this.open.values()) f?.();
  }

  closeAll(): void {
    // Each end() unregisters itself: deleting the entry being visited is safe in a Map walk.
    for (const end of this.open.keys()) end();
    this.open.clear();
  }

  get size(): number {
    return this.open.size;
  }
}
