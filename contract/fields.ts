// Field schemas every boundary shares (the engine's inputs, the worker protocol).
import { z } from 'zod';

/**
 * A whole number given in a path, a query or a body: a JSON integer or decimal digits only
 * (`0x6`, `1e3`, ` 6` and `6.0` are refused; z.coerce.number() took them).
 */
export function decimalInt(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const range = z.number().int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
  return z.union([range, z.string().regex(/^\d{1,16}$/, 'must be a whole number in decimal digits').transform(Number).pipe(range)], { error: 'must be a whole number in decimal digits' });
}
