// The unit tests Stryker runs against each mutant of the core (stryker.config.mjs).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/{timing,schema,lifecycle,scheduler}/**/*.test.ts', 'test/unit/store/{repositories,cas,run-span}.test.ts', 'test/cli/next-command.test.ts'],
    // Stryker's vitest runner uses worker threads, where assigning process.env.TZ does not move
    // Date's zone: machine-day.test.ts (which switches TZ per test) fails there in the dry run.
    exclude: ['test/unit/timing/machine-day.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
