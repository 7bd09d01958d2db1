// The unit tests Stryker runs against each mutant of the core (stryker.config.mjs).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/{timing,schema,lifecycle,scheduler}/**/*.test.ts', 'test/unit/store/{repositories,cas}.test.ts', 'test/cli/next-command.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
