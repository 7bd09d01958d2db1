import { describe, expect, it } from 'vitest';
import { Memo } from '../../../main/engine/timing/memo.js';

describe('Memo', () => {
  it('makes each value once and hands back the same one after', () => {
    const made: string[] = [];
    const m = new Memo<string, string>(10);
    const make = (k: string) => {
      made.push(k);
      return k.toUpperCase();
    };
    expect([m.get('a', make), m.get('b', make), m.get('a', make), m.get('b', make)]).toEqual(['A', 'B', 'A', 'B']);
    expect(made).toEqual(['a', 'b']);
    expect(m.size).toBe(2);
  });

  it('keeps values that are falsy or NaN', () => {
    let calls = 0;
    const m = new Memo<string, number | boolean>(10);
    for (const [k, v] of [['f', false], ['z', 0], ['n', NaN]] as const) {
      m.get(k, () => (calls++, v));
      expect(m.get(k, () => (calls++, 1))).toEqual(v);
    }
    expect(calls).toBe(3);
  });

  it('never holds more than its bound: reaching it drops everything before the next value', () => {
    const m = new Memo<number, number>(3);
    for (const k of [1, 2, 3]) m.get(k, (x) => x * 10);
    expect(m.size).toBe(3);
    expect(m.get(4, (x) => x * 10)).toBe(40);
    expect(m.size).toBe(1);
    let remade = false;
    m.get(1, (x) => ((remade = true), x));
    expect(remade).toBe(true);
    expect(m.size).toBe(2);
  });
});
