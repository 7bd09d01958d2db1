import { describe, expect, it } from 'vitest';
import { editRoutine, saveRoutine } from '../../../main/engine/ops/routines.js';
import { Store } from '../../../main/engine/store/store.js';

describe('routine edit', () => {
  it('clears an optional field given as null, and keeps the rest', () => {
    const store = Store.open(':memory:');
    const now = Date.UTC(2026, 0, 5, 9);
    saveRoutine(store, { id: 'me@host:r', command: 'true', every: '5m', timeout: '30s', revision: 'abc123', tz: 'UTC' }, { now });
    const def = editRoutine(store, 'me@host:r', { timeout: null }, { now });
    expect(def.timeoutMs).toBeNull();
    expect(def.revision).toBe('abc123');
    expect(def.timing).toEqual({ mode: 'every', everyMs: 300_000 });
    store.close();
  });
});
