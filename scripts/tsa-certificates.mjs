// The certificates of a test RFC 3161 time-stamping authority, made by openssl in a directory: a root
// (ECDSA P-256), the TSA (RSA 2048), a second TSA (ECDSA P-256, for "another TSA signed it") and a TSA whose
// certificate expired in 2021 — `<name>.pem` and `<name>.key` each, root `ca` — and `tsa.cnf`, the
// configuration `openssl ts -reply -config tsa.cnf` answers with (run in that directory). Shared by
// test/helpers/tsa.ts (a TSA behind an HTTP listener) and scripts/time-tsa.mjs (vectors/time.json's tokens).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const TSA_CONFIG = `
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = ./tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.2
certs = ./ca.pem
digests = sha256, sha384, sha512
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
database = db/index.txt
new_certs_dir = db
serial = db/serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[ any ]
commonName = supplied
`;

/**
 * Writes the root, the three signers and tsa.cnf into `dir` (a few hundred milliseconds of openssl).
 * `names` gives each certificate's common name, `days` the validity of the root, the TSA and the other TSA.
 */
export async function makeTsaCertificates(dir, { names, days }) {
  const openssl = (...args) => run('openssl', args, { cwd: dir });
  mkdirSync(join(dir, 'db'), { recursive: true });
  writeFileSync(join(dir, 'tsa.cnf'), TSA_CONFIG);
  writeFileSync(join(dir, 'db/index.txt'), '');
  writeFileSync(join(dir, 'db/serial'), '1000\n');
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  const P256 = ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  await openssl(
    'req',
    '-x509',
    '-newkey',
    ...P256,
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    String(days),
    '-subj',
    `/CN=${names.root}`,
  );
  const issue = async (name, keyArgs, dates) => {
    await openssl(
      'req',
      '-newkey',
      ...keyArgs,
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${names[name]}`,
    );
    await openssl(
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
  await issue('tsa', ['rsa:2048'], ['-days', String(days)]);
  await issue('other', P256, ['-days', String(days)]);
  await issue('expired', P256, ['-startdate', '20200101000000Z', '-enddate', '20210101000000Z']);
}
