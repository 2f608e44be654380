// bench/workers/cpu-exit.mjs as a CommonJS script, preloaded with --require: an ES module preloaded with
// --import makes Node load its ES module loader in every timed process, which a CommonJS entry (the
// `stepchain` bin, dist/cli/bin.cjs) and `node -e 0` would not load otherwise.
process.on('exit', () => {
  const u = process.cpuUsage();
  process.stderr.write(`\ncpu-ms ${((u.user + u.system) / 1000).toFixed(1)}\n`);
});
