/**
 * The core stays free of the agent frameworks (issue 18): nothing `stepchain`, `stepchain/verify` (or any
 * other non-adapter entry) reaches imports a framework package, even as a type; the frameworks are
 * optional peers and dev dependencies only, so `npm ci` of the package alone never installs them; and each
 * adapter entry is the only place its framework is named.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
const SRC = join(ROOT, 'src');
const FRAMEWORKS =
  /^(ai|ai\/.*|@ai-sdk\/.*|@openai\/.*|openai|openai\/.*|@langchain\/.*|langchain|langchain\/.*|zod|zod\/.*)$/;

/** Every module `entry` reaches through value or type imports, and the bare specifiers each names. */
function reach(entry: string): { files: string[]; bare: string[] } {
  const seen = new Set<string>();
  const bare: string[] = [];
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(
      /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/gm,
    )) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else bare.push(`${relative(SRC, file)} → ${spec}`);
    }
  };
  visit(join(SRC, entry));
  return { files: [...seen], bare };
}

describe('no framework in the core', () => {
  test.each(['index.ts', 'verify.ts', 'journal.ts', 'format.ts', 'testing/index.ts'])(
    '%s imports no agent framework, directly or through anything it reaches',
    (entry) => {
      const { files, bare } = reach(entry);
      expect(files.length).toBeGreaterThan(1);
      expect(files.filter((f) => relative(SRC, f).startsWith('adapters/'))).toEqual([]);
      expect(bare.filter((b) => FRAMEWORKS.test(b.split(' → ')[1]!))).toEqual([]);
    },
  );

  test('the check sees a framework where there is one: each adapter entry names its own', () => {
    expect(reach('adapters/ai-sdk/index.ts').bare.some((b) => b.endsWith('→ ai'))).toBe(true);
    expect(reach('adapters/openai-agents/index.ts').bare.some((b) => b.endsWith('→ @openai/agents'))).toBe(true);
  });
});

describe('the frameworks are never installed with the package', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean; peer?: boolean }>;
  };

  test.each(['ai', '@openai/agents'])('%s is an optional peer and a dev dependency, not a dependency', (name) => {
    expect(pkg['dependencies']).not.toHaveProperty(name);
    expect(pkg['devDependencies']).toHaveProperty(name);
    expect(pkg['peerDependencies']).toHaveProperty(name);
    expect(pkg['peerDependenciesMeta']?.[name]).toEqual({ optional: true });
  });

  test('npm ci --omit=dev installs no framework package: the lockfile marks every one of them dev-only', () => {
    const frameworkPaths = Object.keys(lock.packages).filter((p) =>
      /node_modules\/(ai|@ai-sdk\/[^/]+|@openai\/[^/]+|openai|zod)$/.test(p),
    );
    expect(frameworkPaths.length).toBeGreaterThanOrEqual(5);
    for (const p of frameworkPaths)
      expect(
        lock.packages[p]?.dev === true || lock.packages[p]?.devOptional === true,
        `${p} is dev-only in package-lock.json`,
      ).toBe(true);
  });

  test.each([
    ['./ai-sdk', 'adapters/ai-sdk/index'],
    ['./openai-agents', 'adapters/openai-agents/index'],
  ])('the subpath %s points at its adapter', (subpath, file) => {
    expect(pkg['exports']?.[subpath]).toEqual({ types: `./dist/${file}.d.ts`, default: `./dist/${file}.js` });
  });
});
