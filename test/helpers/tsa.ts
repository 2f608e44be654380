/**
 * A real RFC 3161 time-stamping authority for tests: OpenSSL's `openssl ts -reply` behind an HTTP listener
 * on 127.0.0.1 (each POSTed query goes to one `openssl ts -reply` process; the TSA logic is OpenSSL's).
 * Its certificates are made with openssl in a temporary directory by scripts/tsa-certificates.mjs: a test
 * root, the TSA (RSA), a second TSA (ECDSA P-256, for "another TSA signed it"), and a TSA whose certificate
 * expired in 2021.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { makeTsaCertificates } from '../../scripts/tsa-certificates.mjs';

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

/** Makes the certificates in `dir` (a few hundred milliseconds of openssl) and starts the listener. */
export async function startTsa(dir: string): Promise<LocalTsa> {
  await makeTsaCertificates(dir, {
    names: { root: 'Test Root', tsa: 'Test TSA', other: 'Other TSA', expired: 'Expired TSA' },
    days: 30,
  });
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
