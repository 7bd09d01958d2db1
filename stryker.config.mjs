// Mutation testing of the core (issue 18): `npm run bench mutation` runs this and writes the score
// per file to bench/results/. While working on one file: `npx stryker run --mutate path/to/file.ts`
// (static mutants then show as Ignored: `TEND_BENCH_MUTATE_REUSE=1 npm run bench mutation` tests them).
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
  // A static mutant (one that only runs while its module loads: a lifecycle table, a cron field
  // table) would run every test, and the vitest runner keeps the un-mutated module in its cache
  // (stryker-js #6209/#6144), so it would be misreported as survived. Stryker reports them as
  // Ignored instead; bench/mutation-static.ts then applies each one to the source by hand.
  ignoreStatic: true,
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
