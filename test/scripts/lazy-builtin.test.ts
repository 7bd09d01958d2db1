// The CLI bundle's stand-ins for Node's built-in modules (scripts/lazy-builtin.mjs) behave as the
// real module does: its members, and for node:assert a call that passes on a true condition and
// throws the real AssertionError, with the caller's message, on a false one.
import { AssertionError } from 'node:assert';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { lazyBuiltinSource } from '../../scripts/lazy-builtin.mjs';

/** Evaluates the stand-in as the bundle does: a CommonJS module. */
function standIn(name: string): unknown {
  const module = { exports: {} as unknown };
  new Function('module', lazyBuiltinSource(name))(module);
  return module.exports;
}

describe('a lazy built-in stand-in', () => {
  it('node:assert lets a true condition pass and throws the real AssertionError with the message on a false one', () => {
    const assert = standIn('node:assert') as (value: unknown, message?: string) => void;
    expect(() => assert(true, 'never')).not.toThrow();
    expect(() => assert(1, 'never')).not.toThrow();
    let thrown: unknown;
    try {
      assert(typeof 3 === 'string', 'Path should be a string');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AssertionError);
    expect((thrown as Error).message).toBe('Path should be a string');
    expect(() => assert(0, 'zero')).toThrow(AssertionError);
  });

  it('node:assert and the others give the real module\'s members', () => {
    const real = createRequire(import.meta.url)('node:assert') as Record<string, unknown>;
    const assert = standIn('node:assert') as Record<string, unknown>;
    expect(assert.strictEqual).toBe(real.strictEqual);
    expect(assert.AssertionError).toBe(AssertionError);
    const https = standIn('node:https') as Record<string, unknown>;
    expect(https.createServer).toBe(createRequire(import.meta.url)('node:https').createServer);
  });
});
