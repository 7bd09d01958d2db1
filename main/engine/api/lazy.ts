// A route module's schemas (zod) and handlers are loaded by its first request, not at start: an
// idle daemon serves its API without them (bench idle, test/daemon/lazy-modules.test.ts).

/** `load` run once, on first call; every call gets its result. */
export function onFirstCall<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | null = null;
  return () => (loaded ??= load());
}
