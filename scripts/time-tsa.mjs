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
import { SUBJECTS } from './vectors/time.mjs';

const dir = mkdtempSync(join(tmpdir(), 'stepchain-time-tsa-'));
const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
const config = `
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = ./tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.2
certs = ./ca.pem
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
[ tsa_ext ]
extendedKeyUsage = critical,timeStamping
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
subjectKeyIdentifier = hash
[ ca ]
default_ca = testca
[ testca ]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[ any ]
commonName = supplied
`;
try {
  writeFileSync(join(dir, 'tsa.cnf'), config);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '36500',
    '-subj',
    '/CN=stepchain vectors root',
  );
  const issue = (name, key, cn, dates) => {
    ssl('req', '-newkey', ...key, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl(
      'ca',
      '-batch',
      '-config',
      'tsa.cnf',
      '-cert',
      'ca.pem',
      '-keyfile',
      'ca.key',
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
      ...dates,
      '-extfile',
      'tsa.cnf',
      '-extensions',
      'tsa_ext',
      '-notext',
    );
  };
  issue('tsa', ['rsa:2048'], 'stepchain vectors TSA', ['-days', '36500']);
  issue('other', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'another TSA', ['-days', '36500']);
  issue('expired', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'expired TSA', [
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20210101000000Z',
  ]);
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
