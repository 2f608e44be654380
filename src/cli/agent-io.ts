/**
 * Standard output and error for the agent verbs (issue 45, CLI start-up): written with `fs.writeSync` on the
 * descriptor, where Node's `process.stdout` and `process.stderr` would be made first. On a pipe — how an
 * agent in another language runs `stepchain` — each of those is a net.Socket over a libuv pipe: loading and
 * setting up net, the stream wrappers and the pipe binding cost about 2 ms of CPU per command (3% of
 * `node -e 0`), for the one line or one JSON document these verbs print.
 *
 * The same bytes reach the same descriptor in the same order. Where a synchronous write cannot go on — the
 * descriptor is non-blocking and full (EAGAIN), or it fails (a closed pipe: EPIPE) — what is left goes to
 * Node's own stream from then on, which queues, or fails, exactly as it did before. `isTTY` is Node's
 * answer (`tty.isatty`), asked only of a character device: a pipe or a file is never a terminal, and
 * `process.stderr.isTTY` is undefined there too.
 */
const { fstatSync, writeSync } = process.getBuiltinModule('node:fs');

export class DescriptorOutput {
  private stream: NodeJS.WriteStream | undefined;
  private asked = false;
  private tty: true | undefined;

  constructor(
    private readonly fd: number,
    private readonly nodeStream: () => NodeJS.WriteStream,
  ) {}

  get isTTY(): true | undefined {
    if (!this.asked) {
      this.asked = true;
      let device = false;
      try {
        device = fstatSync(this.fd).isCharacterDevice();
      } catch {
        device = false;
      }
      this.tty = device && process.getBuiltinModule('node:tty').isatty(this.fd) ? true : undefined;
    }
    return this.tty;
  }

  /** Events are the stream's (Output.stream waits for 'drain' when a write returned false: only the stream's can). */
  on(event: string, listener: (...args: unknown[]) => void): this {
    (this.stream ??= this.nodeStream()).on(event, listener);
    return this;
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    (this.stream ??= this.nodeStream()).once(event, listener);
    return this;
  }

  off(event: string, listener: (...args: unknown[]) => void): this {
    this.stream?.off(event, listener);
    return this;
  }

  write(text: string): boolean {
    if (this.stream) return this.stream.write(text);
    let bytes = Buffer.from(text, 'utf8');
    try {
      while (bytes.length > 0) bytes = bytes.subarray(writeSync(this.fd, bytes));
      return true;
    } catch {
      this.stream = this.nodeStream();
      return this.stream.write(bytes);
    }
  }
}

/**
 * The agent verbs' stdout and stderr (descriptors 1 and 2; scripts/agent-cache.mjs gives others), typed as
 * the Output takes them (it calls `write`, reads `isTTY`, and waits on events only after a false `write`).
 */
export function descriptorOutputs(out = 1, err = 2): { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } {
  return {
    stdout: new DescriptorOutput(out, () => process.stdout) as unknown as NodeJS.WriteStream,
    stderr: new DescriptorOutput(err, () => process.stderr) as unknown as NodeJS.WriteStream,
  };
}
