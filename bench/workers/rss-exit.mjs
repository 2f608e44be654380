// Preloaded (--import) into a child process whose memory the harness measures as a user would see it:
// at exit it writes the process's peak RSS (VmHWM, Linux; every thread, the worker threads' heaps
// included) to stderr. VmHWM belongs to this process image alone: getrusage's maxRSS carries the parent's
// peak over through fork and exec.
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  process.on('exit', () => {
    let mb = process.resourceUsage().maxRSS / 1024;
    try {
      const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
      if (m) mb = Number(m[1]) / 1024;
    } catch {
      // not Linux: maxRSS
    }
    process.stderr.write(`\npeak-rss-mb ${mb.toFixed(1)}\n`);
  });
}
