#!/usr/bin/env node
// Makes the RFC 3161 material behind vectors/time.json (spec/TIME.md §9), once: a test root, a TSA (RSA),
// another TSA (ECDSA P-256) and a TSA whose certificate expired in 2021, all by openssl in a temporary
// directory, and OpenSSL's own tokens (`openssl ts -reply`) over the timestamp subjects of the fixed journal
// of scripts/vectors/time.mjs. It writes scripts/vectors-fixtures/time-tsa.json, which is committed: tokens
// carry the time they were made, so the vector generator reads them instead of asking a TSA each run (the
// vectors stay byte-identical). Run it only to replace that material, then `npm run vectors`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTsaCertificates } from './tsa-certificates.mjs';
import { SUBJECTS } from './vectors/time.mjs';

const dir = mkdtempSync(join(tmpdir(), 'stepchain-time-tsa-'));
const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
try {
  await makeTsaCertificates(dir, {
    names: {
      root: 'stepchain vectors root',
      tsa: 'stepchain vectors TSA',
      other: 'another TSA',
      expired: 'expired TSA',
    },
    days: 36500,
  });
  const tokens = {};
  for (const [name, { digest, signer }] of Object.entries(SUBJECTS)) {
    ssl('ts', '-query', '-digest', digest, '-sha256', '-cert', '-no_nonce', '-out', `${name}.tsq`);
    ssl(
      'ts',
      '-reply',
      '-config',
      'tsa.cnf',
      '-queryfile',
      `${name}.tsq`,
      '-signer',
      `${signer}.pem`,
      '-inkey',
      `${signer}.key`,
      '-token_out',
      '-out',
      `${name}.tst`,
    );
    tokens[name] = readFileSync(join(dir, `${name}.tst`)).toString('base64');
  }
  const pem = (n) => readFileSync(join(dir, `${n}.pem`), 'utf8');
  const out = fileURLToPath(new URL('./vectors-fixtures/time-tsa.json', import.meta.url));
  writeFileSync(
    out,
    JSON.stringify(
      {
        comment: 'made by scripts/time-tsa.mjs with openssl; see spec/TIME.md §9',
        certificates: { tsa: pem('tsa'), other: pem('other'), expired: pem('expired'), root: pem('ca') },
        tokens,
      },
      null,
      2,
    ) + '\n',
  );
  console.error(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
