// The unit tests Stryker runs against each mutant of the core (stryker.config.json).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/{timing,schema,lifecycle,scheduler,store}/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
