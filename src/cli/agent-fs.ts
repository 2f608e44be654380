/**
 * node:fs/promises as the agent verbs' bundle sees it (issue 45, CLI start-up): each call made with Node's
 * synchronous twin and its result given as a promise, so a one-shot `append` or `effect` does its file work
 * on its own thread. scripts/build-cli.mjs puts this module in place of node:fs/promises in
 * dist/cli/agent/main.cjs only; every other build, and the library, use Node's.
 *
 * Why: through node:fs/promises each of the ~60 file operations of one `append` (the lock, the tail read,
 * the line, head, tree and run-state files, their fsyncs) is handed to libuv's thread pool and its answer
 * handed back: four pool threads started at the first, two context switches or more for each (≈ 270 a
 * command, against 14 for `node -e 0`), and Node's FileHandle machinery loaded. The process waits for each
 * answer anyway, so nothing ran meanwhile that a synchronous call holds up: the work done and its order are
 * the same, and so are the results and errors (the same `Error` objects: code, errno, syscall, path and
 * message are Node's, from the same system calls).
 *
 * Only what the store and the verbs call is here; the build fails if the bundle asks for anything else (no
 * matching export). An operation is never both started and awaited later while another runs: every call
 * completes before it returns, as a resolved or rejected promise.
 */
import * as fs from 'node:fs';

type Bytes = NodeJS.ArrayBufferView;

/** A FileHandle over a descriptor, each method Node's synchronous call on it. */
export class FileHandle {
  constructor(readonly fd: number) {}

  /** read(buffer, offset?, length?, position?), read(buffer, options?) or read(options?), as FileHandle.read. */
  async read(
    first?: Bytes | { buffer?: Bytes; offset?: number; length?: number; position?: number | bigint | null },
    ...rest: unknown[]
  ): Promise<{ bytesRead: number; buffer: Bytes }> {
    const options = ArrayBuffer.isView(first)
      ? typeof rest[0] === 'object' && rest[0] !== null
        ? rest[0]
        : {}
      : (first ?? {});
    const buffer = (ArrayBuffer.isView(first) ? first : (options as { buffer?: Bytes }).buffer) ?? Buffer.alloc(16384);
    const o = options as { offset?: number; length?: number; position?: number | bigint | null };
    const positional = ArrayBuffer.isView(first) && (typeof rest[0] !== 'object' || rest[0] === null);
    const offset = (positional ? (rest[0] as number | undefined) : o.offset) ?? 0;
    const length = (positional ? (rest[1] as number | undefined) : o.length) ?? buffer.byteLength - offset;
    const position = (positional ? (rest[2] as number | bigint | null | undefined) : o.position) ?? null;
    const bytesRead = length === 0 ? 0 : fs.readSync(this.fd, buffer, offset, length, position);
    return { bytesRead, buffer };
  }

  /** write(buffer, offset?, length?, position?), write(buffer, options) or write(string, position?, encoding?). */
  async write<T extends Bytes | string>(data: T, ...rest: unknown[]): Promise<{ bytesWritten: number; buffer: T }> {
    const bytesWritten = (fs.writeSync as (fd: number, data: T, ...rest: unknown[]) => number)(this.fd, data, ...rest);
    return { bytesWritten, buffer: data };
  }

  async writeFile(data: string | Bytes, options?: fs.WriteFileOptions): Promise<void> {
    fs.writeFileSync(this.fd, data, options);
  }

  async readFile(options?: { encoding?: BufferEncoding | null } | BufferEncoding | null): Promise<string | Buffer> {
    return fs.readFileSync(this.fd, options as BufferEncoding);
  }

  async appendFile(data: string | Uint8Array, options?: fs.WriteFileOptions): Promise<void> {
    fs.appendFileSync(this.fd, data, options);
  }

  async stat(options?: fs.StatOptions): Promise<fs.Stats | fs.BigIntStats | undefined> {
    return fs.fstatSync(this.fd, options);
  }

  async truncate(length?: number): Promise<void> {
    fs.ftruncateSync(this.fd, length);
  }

  async sync(): Promise<void> {
    fs.fsyncSync(this.fd);
  }

  async datasync(): Promise<void> {
    fs.fdatasyncSync(this.fd);
  }

  async utimes(atime: fs.TimeLike, mtime: fs.TimeLike): Promise<void> {
    fs.futimesSync(this.fd, atime, mtime);
  }

  async close(): Promise<void> {
    fs.closeSync(this.fd);
  }
}

type PathOrHandle = fs.PathLike | FileHandle;
const target = (p: PathOrHandle): fs.PathOrFileDescriptor => (p instanceof FileHandle ? p.fd : p);

export async function open(path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode): Promise<FileHandle> {
  return new FileHandle(fs.openSync(path, flags ?? 'r', mode));
}

export async function readFile(path: PathOrHandle, options?: unknown): Promise<string | Buffer> {
  return fs.readFileSync(target(path), options as BufferEncoding);
}

export async function writeFile(
  path: PathOrHandle,
  data: string | Bytes,
  options?: fs.WriteFileOptions,
): Promise<void> {
  fs.writeFileSync(target(path), data, options);
}

export async function appendFile(
  path: PathOrHandle,
  data: string | Uint8Array,
  options?: fs.WriteFileOptions,
): Promise<void> {
  fs.appendFileSync(target(path), data, options);
}

/** Each of these is its synchronous twin, arguments and result as they are. */
const twin =
  <A extends unknown[], R>(call: (...args: A) => R) =>
  async (...args: A): Promise<R> =>
    call(...args);

export const access = twin(fs.accessSync);
export const lstat = twin(fs.lstatSync);
export const mkdir = twin(fs.mkdirSync);
export const readdir = twin(fs.readdirSync);
export const rename = twin(fs.renameSync);
export const rm = twin(fs.rmSync);
export const rmdir = twin(fs.rmdirSync);
export const stat = twin(fs.statSync);
export const unlink = twin(fs.unlinkSync);
export const utimes = twin(fs.utimesSync);

/**
 * opendir as `for await (const entry of await opendir(path))` uses it: the directory's entries as
 * fs.Dirent, read when it is opened (an error there, as Node's opendir would give).
 */
export async function opendir(
  path: fs.PathLike,
): Promise<{ path: string; close(): Promise<void>; [Symbol.asyncIterator](): AsyncGenerator<fs.Dirent> }> {
  const entries = fs.readdirSync(path, { withFileTypes: true });
  return {
    path: String(path),
    async close() {},
    async *[Symbol.asyncIterator]() {
      yield* entries;
    },
  };
}
