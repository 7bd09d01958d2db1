// Types of scripts/lazy-builtin.mjs for the tests.
export function lazyBuiltinSource(name: string): string;
