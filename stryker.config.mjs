// Mutation testing of the core (issue 18): `npm run bench mutation` runs this and writes the score
// per file to bench/results/. While working on one file: `npx stryker run --mutate path/to/file.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'main/engine/timing/**/*.ts',
    'main/engine/lifecycle/**/*.ts',
    'main/engine/scheduler/**/*.ts',
    'main/engine/store/cas.ts',
  ],
  coverageAnalysis: 'perTest',
  // The machine is shared: two test processes at most.
  concurrency: 2,
  // Only mutants whose code or tests changed since the last run are run again.
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['json', 'clear-text', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { reportScoreTable: true, allowColor: false, logTests: false },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'release', 'test-results', 'bench/results', 'reports', '.tend-dev', '.prof'],
  // Stryker would rewrite tsconfig.json's paths with TypeScript's JS API, which the native compiler
  // (typescript 7) does not have; the sandbox keeps the tsconfig files side by side, so nothing needs rewriting.
  tsconfigFile: '',
  // A mutant that loops for ever is caught this long after the tests' own time (times 1.5).
  timeoutMS: 3000,
};
