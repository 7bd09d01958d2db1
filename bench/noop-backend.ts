import type { Backend, Handle, JobSpec, Outcome, PollState } from '../main/engine/backend.js';

/** A backend whose jobs finish the moment they are submitted: measures the pass, not processes. */
export class NoopBackend implements Backend {
  readonly name = 'local';
  submitted = 0;
  async health() {
    return { ok: true, reason: null };
  }
  async submit(spec: JobSpec): Promise<Handle> {
    this.submitted++;
    return { id: spec.runId };
  }
  async poll(handles: Handle[]): Promise<PollState[]> {
    return handles.map(() => ({ state: 'done' }));
  }
  async fetch(): Promise<Outcome> {
    return { exitCode: 0, signal: null, reason: null, startedAt: null, endedAt: null };
  }
  async cancel(): Promise<void> {}
  tailLog(): string {
    return '';
  }
  async *followLog(): AsyncGenerator<string> {}
  readManifest(): null {
    return null;
  }
}
