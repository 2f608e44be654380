// Preloaded (--import) into a timed child process: at exit it writes the process's CPU time (user +
// system, every thread) to stderr, so start-up can be compared in CPU time, which other load on the
// machine barely moves, beside wall time, which it does.
process.on('exit', () => {
  const u = process.cpuUsage();
  process.stderr.write(`\ncpu-ms ${((u.user + u.system) / 1000).toFixed(1)}\n`);
});
