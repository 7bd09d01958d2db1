// A run's (or a job's) captured output, read through the backend that ran it: the local and Slurm
// backends read the job directory, a worker's run is answered by the pool backend. Never a path
// read here: a remote run's directory is on another host.
import type { Backend, LogFollowOptions, LogStream } from './backend.js';
import { TendError } from './errors.js';

/** What a run or job row says about where its output is. */
export interface LogPlace {
  backend: string | null;
  runDir: string | null;
}

export interface RunLogs {
  /** The newest `maxBytes` of a stream; '' when the work never started. */
  tail(place: LogPlace, stream: LogStream, maxBytes: number): Promise<string>;
  /** The stream as it is written; nothing when the work never started. */
  follow(place: LogPlace, stream: LogStream, opts?: LogFollowOptions): AsyncIterable<string>;
}

export function runLogs(backendOf: (name: string) => Backend | undefined): RunLogs {
  const backend = (place: LogPlace): Backend => {
    // Rows of an older Tend may name no backend: everything ran locally then.
    const name = place.backend ?? 'local';
    const b = backendOf(name);
    if (!b) throw new TendError('UNAVAILABLE', `the output is kept by backend ${name}, which this process does not have`);
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
  };
}
