/**
 * Every relative link of README.md and docs/*.md resolves twice (issue 37): in the repository, and in the npm
 * package — the file list `npm pack --dry-run` reports from package.json "files", since readers follow the
 * links inside node_modules/stepchain too. A link with a #fragment into a Markdown file must name one of its
 * headings (GitHub's slugs). Links to the web are not fetched.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { documentedFiles, parseBlocks, ROOT } from '../../scripts/docs/blocks.mjs';

/** The links of a Markdown text outside code blocks and code spans: [text](target) and ![alt](target). */
function linksOf(text: string): { target: string; line: number }[] {
  const lines = text.split('\n');
  const inCode = new Set<number>();
  for (const b of parseBlocks(text)) for (let i = b.start; i <= b.end; i++) inCode.add(i);
  const out: { target: string; line: number }[] = [];
  lines.forEach((line, i) => {
    if (inCode.has(i)) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = markdown.split('\n');
  const inCode = new Set<number>();
  for (const b of parseBlocks(markdown)) for (let i = b.start; i <= b.end; i++) inCode.add(i);
  text.forEach((line, i) => {
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (!h || inCode.has(i)) return;
    const slug = h[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  });
  return anchors;
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

function packedFiles(): Set<string> {
  // --ignore-scripts: the list comes from "files" alone, without building first.
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(json) as { files: { path: string }[] }[];
  return new Set(pack!.files.map((f) => f.path));
}

const packed = packedFiles();
const inPackage = (path: string) => packed.has(path) || [...packed].some((p) => p.startsWith(`${path.replace(/\/$/, '')}/`));

test('the npm package holds the CLI and the library (npm pack builds first: prepack, test/cli/human-output.test.ts)', () => {
  for (const path of ['dist/cli/main.js', 'dist/index.js', 'package.json']) expect(packed.has(path), path).toBe(true);
});

describe.each(documentedFiles())('%s', (file) => {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const links = linksOf(text).filter((l) => !external(l.target));

  test('is in the npm package', () => {
    expect(packed.has(file)).toBe(true);
  });

  test('every relative link resolves in the repository and in the npm package', () => {
    const broken: string[] = [];
    for (const { target, line } of links) {
      const [path = '', fragment] = target.split('#');
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      const where = `${file}:${line}: ${target}`;
      if (resolved.startsWith('..')) { broken.push(`${where} leaves the repository`); continue; }
      const abs = join(ROOT, resolved);
      if (!existsSync(abs)) { broken.push(`${where}: ${resolved} does not exist in the repository`); continue; }
      if (!inPackage(relative(ROOT, abs))) broken.push(`${where}: ${resolved} is not in the npm package (package.json "files")`);
      if (fragment !== undefined && statSync(abs).isFile() && resolved.endsWith('.md') && !anchorsOf(readFileSync(abs, 'utf8')).has(fragment)) {
        broken.push(`${where}: ${resolved} has no heading #${fragment}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

test('links are found in prose, not in code', () => {
  const text = 'See [the guide](docs/a.md#x) and ![pic](p.png).\n`[not](this.md)`\n```md\n[nor](that.md)\n```\n[web](https://example.com)';
  expect(linksOf(text).map((l) => l.target)).toEqual(['docs/a.md#x', 'p.png', 'https://example.com']);
  expect([...anchorsOf('# The CLI, verb by verb\n## Run journals and effects\n## Run journals and effects')]).toEqual(['the-cli-verb-by-verb', 'run-journals-and-effects', 'run-journals-and-effects-1']);
});
