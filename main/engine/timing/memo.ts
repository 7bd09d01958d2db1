// The timing code's caches (compiled cron expressions, zone validity, formatters, offsets per hour,
// facts per local day): each value computed once, the whole cache dropped when it reaches its
// bound, so a stream of distinct keys (validating arbitrary input over the API) cannot grow memory
// without end. One tested helper instead of a hand-written map in every module.

export class Memo<K, V> {
  private readonly values = new Map<K, V>();

  constructor(readonly limit: number) {}

  /** The value for `key`, made by `make` the first time (after the cache was last dropped). */
  get(key: K, make: (key: K) => V): V {
    if (this.values.has(key)) return this.values.get(key)!;
    const v = make(key);
    if (this.values.size >= this.limit) this.values.clear();
    this.values.set(key, v);
    return v;
  }

  get size(): number {
    return this.values.size;
  }
}
