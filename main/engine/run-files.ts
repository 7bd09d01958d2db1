// A run's (or a job's) files — its captured output and its manifest — read through the backend
// that ran it: the local and Slurm backends read the job directory, a worker's run is answered by
// the pool backend. Never a path read here: a remote run's directory is on another host.
import type { Backend, LogFollowOptions, LogStream, Manifest } from './backend.js';
import { TendError } from './errors.js';

/** What a run or job row says about where its files are. */
export interface RunPlace {
  backend: string | null;
  runDir: string | null;
}

export interface RunFiles {
  /** The newest `maxBytes` of a stream; '' when the work never started. */
  tail(place: RunPlace, stream: LogStream, maxBytes: number): Promise<string>;
  /** The stream as it is written; nothing when the work never started. */
  follow(place: RunPlace, stream: LogStream, opts?: LogFollowOptions): AsyncIterable<string>;
  /** What the backend recorded about the launch; null when it never started or left none. */
  manifest(place: RunPlace): Promise<Manifest | null>;
}

export function runFiles(backendOf: (name: string) => Backend | undefined): RunFiles {
  const backend = (place: RunPlace): Backend => {
    // Rows of an older Tend may name no backend: everything ran locally then.
    const name = place.backend ?? 'local';
    const b = backendOf(name);
    if (!b) throw new TendError('UNAVAILABLE', `the run's files are kept by backend ${name}, which this process does not have`);
    return b;
  };
  return {
    async tail(place, stream, maxBytes) {
      if (!place.runDir) return '';
      return await backend(place).tailLog(place.runDir, stream, maxBytes);
    },
    async *follow(place, stream, opts) {
      if (!place.runDir) return;
      yield* backend(place).followLog(place.runDir, stream, opts);
    },
    async manifest(place) {
      if (!place.runDir) return null;
      return await backend(place).readManifest(place.runDir);
    },
  };
}
