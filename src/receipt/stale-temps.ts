/**
 * Temporary files a killed writer left beside its output: a receipt is written to `<out>.tmp-<pid>-<ms>`
 * and renamed over `out`, and a process killed in between leaves the temporary file
 * (outsider H: 8 and 10 of 15 and 17 SIGKILLed exports). The next write of the same output removes those of
 * processes that are gone; one of a live process (another export under way), or of any other name, stays.
 */
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function removeStaleTemps(out: string): Promise<void> {
  const dir = dirname(out);
  const prefix = `${basename(out)}.tmp-`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return; // nothing to tidy where the folder cannot be listed
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d{1,10})-\d{1,16}$/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || Number(pid) < 2 || Number(pid) === process.pid || alive(Number(pid))) continue;
    await rm(join(dir, name), { force: true }).catch(() => {});
  }
}

/** Whether process `pid` exists (one of another user's answers EPERM: it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
