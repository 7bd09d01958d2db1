// This host's name as a computer (`user@host`): what completes short routine ids and marks what
// runs here. Its own module so the engine and the doctor need not load the input schemas (zod).
import os from 'node:os';

export function localComputer(): string {
  let user = 'user';
  try {
    user = os.userInfo().username || user;
  } catch {
    /* no passwd entry in some containers */
  }
  return `${user}@${os.hostname().split('.')[0]}`;
}
