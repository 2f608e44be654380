/** Types for scripts/tsa-certificates.mjs (used from test/helpers/tsa.ts). */
export function makeTsaCertificates(
  dir: string,
  options: { names: { root: string; tsa: string; other: string; expired: string }; days: number },
): Promise<void>;
