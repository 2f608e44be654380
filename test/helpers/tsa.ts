/**
 * A real RFC 3161 time-stamping authority for tests: OpenSSL's `openssl ts -reply` behind an HTTP listener
 * on 127.0.0.1 (each POSTed query goes to one `openssl ts -reply` process; the TSA logic is OpenSSL's).
 * Its certificates are made with openssl in a temporary directory: a test root, the TSA (RSA), a second
 * TSA (ECDSA P-256, for "another TSA signed it"), and a TSA whose certificate expired in 2021.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type Signer = 'tsa' | 'other' | 'expired';

export interface LocalTsa {
  url: string;
  /** The PEM certificate file of each signer. */
  cert: Record<Signer, string>;
  /** Which signer answers the next requests. */
  use(signer: Signer): void;
  /** Queries answered so far. */
  answered: number;
  close(): Promise<void>;
}

const TSA_CONFIG = `
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = ./tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.2
certs = ./empty.pem
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

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/** Makes the certificates in `dir` (a few hundred milliseconds of openssl) and starts the listener. */
export async function startTsa(dir: string): Promise<LocalTsa> {
  mkdirSync(join(dir, 'db'), { recursive: true });
  writeFileSync(join(dir, 'tsa.cnf'), TSA_CONFIG);
  writeFileSync(join(dir, 'db/index.txt'), '');
  writeFileSync(join(dir, 'db/serial'), '1000\n');
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  await openssl(
    dir,
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
    '30',
    '-subj',
    '/CN=Test Root',
  );
  writeFileSync(join(dir, 'empty.pem'), readFileSync(join(dir, 'ca.pem')));
  const issue = async (name: string, keyArgs: string[], cn: string, dates: string[]): Promise<void> => {
    await openssl(
      dir,
      'req',
      '-newkey',
      ...keyArgs,
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${cn}`,
    );
    await openssl(
      dir,
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
  await issue('tsa', ['rsa:2048'], 'Test TSA', ['-days', '30']);
  await issue('other', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'Other TSA', ['-days', '30']);
  await issue('expired', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'Expired TSA', [
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20210101000000Z',
  ]);
  let signer: Signer = 'tsa';
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = ++n;
      const query = join(dir, `q${id}.tsq`);
      const reply = join(dir, `r${id}.tsr`);
      writeFileSync(query, Buffer.concat(chunks));
      execFile(
        'openssl',
        [
          'ts',
          '-reply',
          '-config',
          'tsa.cnf',
          '-queryfile',
          query,
          '-signer',
          `${signer}.pem`,
          '-inkey',
          `${signer}.key`,
          '-out',
          reply,
        ],
        { cwd: dir },
        (error) => {
          if (error) {
            res.writeHead(500).end(String(error));
            return;
          }
          tsa.answered++;
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(readFileSync(reply));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const tsa: LocalTsa = {
    url: `http://127.0.0.1:${address.port}/tsr`,
    cert: { tsa: join(dir, 'tsa.pem'), other: join(dir, 'other.pem'), expired: join(dir, 'expired.pem') },
    use: (s) => void (signer = s),
    answered: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return tsa;
}
