/** Types of scripts/docs/blocks.mjs, for test/docs (the script stays plain JavaScript so `npm run docs:update` needs no build). */
export interface Block { lang: string; attrs: Record<string, string | true>; start: number; end: number; body: string[] }
export interface ConsoleStep { command: string; line: number; expectedExit: number; output: string[] }
export interface ConsoleResult { block: Block; kind: 'console'; steps: (ConsoleStep & { exit: number; actual: string })[] }
export interface CodeResult { block: Block; kind: 'code'; path: string; exit: number; output: string }
export const ROOT: string;
export const CLI: string;
export const CODE_COMPILER_OPTIONS: Record<string, unknown>;
export function documentedFiles(): string[];
export function parseBlocks(text: string): Block[];
export function blockKind(block: Block): 'console' | 'file' | 'code' | 'shown';
export function parseConsole(block: Block): ConsoleStep[];
export function normalize(text: string, dir?: string): string;
export function makeWorkdir(prefix?: string): string;
export function docEnv(dir: string, extra?: Record<string, string>): NodeJS.ProcessEnv;
export function runCommand(command: string, dir: string, env?: NodeJS.ProcessEnv): Promise<{ exit: number; output: string }>;
export function writeFileBlock(block: Block, dir: string): void;
export function makeCodeDir(): string;
export function writeCodeBlock(block: Block, codeDir: string, name: string): string;
export function runCodeBlock(path: string, dir: string, env?: NodeJS.ProcessEnv): Promise<{ exit: number; output: string }>;
export function runDocument(file: string, options?: { codeDir?: string; env?: Record<string, string> }): Promise<{ text: string; dir: string; results: (ConsoleResult | CodeResult)[] }>;
export function rewriteConsoleOutput(text: string, results: (ConsoleResult | CodeResult)[], dir: string): { text: string; rewritten: number };
