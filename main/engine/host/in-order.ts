// Stopping must get to the end: a step that fails (webhook delivery refusing to stop, an API close
// that throws) must not leave the store open or the data dir claimed, or the next owner finds a
// live-looking claim and an unclean shutdown that was not one.
import { errorMessage } from '../errors.js';

export type Step = readonly [name: string, run: () => unknown];

/** Runs every step in order, each awaited; a failure is logged by name and the next step runs. */
export async function runInOrder(steps: readonly Step[], log: (line: string) => void): Promise<string[]> {
  const failed: string[] = [];
  for (const [name, run] of steps) {
    try {
      await run();
    } catch (err) {
      failed.push(name);
      log(`stopping: ${name} failed: ${errorMessage(err)}`);
    }
  }
  return failed;
}
