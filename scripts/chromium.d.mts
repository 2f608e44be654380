/** Types for scripts/chromium.mjs (used from the TypeScript page tests). */
import type { LaunchOptions } from 'playwright-core';

export function ensureChromium(): Promise<string>;
export function launchOptions(exe: string): LaunchOptions & { executablePath: string };
