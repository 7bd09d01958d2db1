const { buildHistory } = await import('./dist/bench/history-build.js');
const n = buildHistory(process.argv[2], Date.now(), Number(process.argv[3]), console.log);
console.log('runs', n);
