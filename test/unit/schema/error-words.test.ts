// Every schema error names the field and the reason in words, never a bare "Invalid input":
// a retry policy with a bad part, a size that is not one, a duration in exponent notation.
import { expect, it } from 'vitest';
import { parseRoutine } from '../../../main/engine/domain/schema.js';
import { TendError } from '../../../main/engine/errors.js';

function issuesOf(input: Record<string, unknown>): { path: string; message: string }[] {
  try {
    parseRoutine({ id: 'me@host:r', command: 'true', every: '1h', ...input }, { now: 0 });
  } catch (err) {
    if (err instanceof TendError) return err.issues;
    throw err;
  }
  throw new Error('accepted');
}

it.each([
  [{ retry: { every: '60s', for: '-1h' } }, 'retry.for', 'duration must be positive, got "-1h"'],
  [{ retry: { every: '-60s', for: '1h' } }, 'retry.every', 'duration must be positive, got "-60s"'],
  [{ retry: { every: '5 parsecs', for: '1h' } }, 'retry.every', 'duration "5 parsecs" has an unknown unit "parsecs" (use ms, s, m, h or d)'],
  [{ retry: 'sometimes' }, 'retry', 'must be "none" or an object'],
  [{ log_cap: 'lots' }, 'log_cap', '"lots" is not a size: a number of bytes, or a number and a unit (KiB, MiB, GiB), e.g. 65536, 512KiB, 64MiB'],
  [{ log_cap: '1KiB' }, 'log_cap', 'size must be at least 4KiB, e.g. 65536, 512KiB, 64MiB'],
  [{ every: undefined, in: '1e3s' }, 'in', 'duration "1e3s" uses an exponent: a duration is a number and a unit (500ms, 30s, 5m, 2h, 1d, or sums such as 1h30m)'],
])('%j → %s: %s', (input, path, message) => {
  const issues = issuesOf(input);
  expect(issues).toContainEqual({ path, message });
  for (const i of issues) expect(i.message).not.toMatch(/^Invalid input/);
});
