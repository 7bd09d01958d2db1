// The vitest hooks of a file whose tests each start daemons in a scratch data dir of their own.
import { afterEach, beforeAll } from 'vitest';
import { assertBuilt, killTracked } from './cli.js';
import { stopOwner } from './daemon.js';

/**
 * The hooks of a file whose tests each use a scratch data dir (`current()`): the CLI is built
 * before any test; after each, the dir's daemon is stopped, every tracked process killed, the dir removed.
 */
export function useDaemonBox(current: () => { dir: string; remove: () => void } | undefined): void {
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    const box = current();
    if (!box) return;
    await stopOwner(box.dir);
    await killTracked();
    box.remove();
  });
}
