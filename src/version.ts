/** The package version, kept as a constant so the browser-safe code needs no package.json import; test/version.test.ts checks it. */
export const VERSION = '0.1.0';
