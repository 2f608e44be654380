/**
 * Who this process is, and whether another one still runs (spec/FILE-STORE.md §8's holder record): the
 * host identity that says two processes share a process table, and a process's start time, which tells
 * a pid's holder from a later process reusing the pid. Linux reads /proc; elsewhere these are unknown,
 * and a dead holder's lock is freed by staleness only.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Linux: `linux:<boot_id>:<pid namespace>`. The boot id separates machines (and boots) sharing a file
 * system; the pid namespace separates containers sharing a kernel, whose pids mean different processes.
 * Elsewhere null: a host name alone does not prove two processes share a process table, so there a dead
 * writer's lock is freed by staleness only.
 */
export function hostIdentity(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const ns = readlinkSync('/proc/self/ns/pid');
    return /^[0-9a-f-]{36}$/.test(boot) && /^pid:\[\d+\]$/.test(ns) ? `linux:${boot}:${ns}` : null;
  } catch {
    return null;
  }
}

export function safeHostname(): string {
  try {
    return hostname().slice(0, 255);
  } catch {
    return '';
  }
}

/** Linux: field 22 of /proc/<pid>/stat (starttime, clock ticks after boot); null when unknown. */
export function processStart(pid: number): string | null {
  return processStat(pid)?.start ?? null;
}

/**
 * Linux: a process's start (field 22 of /proc/<pid>/stat), state (field 3: R, S, D, T, Z, …) and number of
 * threads (field 20); null when unknown (another platform, no such process, /proc hidden). A zombie (Z, or X
 * while being reaped) with no other thread has exited: none of its code runs any more, though its pid stays
 * taken until its parent reaps it. (A thread-group leader that ended alone is Z while its other threads run.)
 */
export function processStat(pid: number): { start: string; state: string; threads: number } | null {
  if (process.platform !== 'linux') return null;
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces and ")": fields resume after the last ")".
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const start = fields[19]; // field 22; fields[0] is field 3
    const state = fields[0];
    const threads = Number(fields[17]); // field 20
    return start !== undefined &&
      /^\d{1,20}$/.test(start) &&
      state !== undefined &&
      /^[A-Za-z]$/.test(state) &&
      Number.isSafeInteger(threads)
      ? { start, state, threads }
      : null;
  } catch {
    return null;
  }
}
