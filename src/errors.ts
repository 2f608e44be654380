/**
 * The error base shared by every stepchain domain. Each domain subclasses it with a closed union of
 * string codes; codes are public API (add, never rename) and also appear at the start of the message,
 * so a log line alone is enough to look the failure up in the docs.
 */
export interface ErrorLocation {
  /** A file: a bucket, a receipt, a tar entry, a policy. */
  file?: string;
  /** 1-based line within `file`. */
  line?: number;
  /** The step's seq. */
  seq?: number;
  /** An RFC 6901 JSON Pointer into the value or step. */
  path?: string;
}

export class StepchainError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly location: ErrorLocation;
  readonly hint: string | undefined;

  constructor(code: Code, message: string, options: { location?: ErrorLocation; hint?: string; cause?: unknown } = {}) {
    super(
      `${code}: ${message}${options.hint ? ` (${options.hint})` : ''}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.code = code;
    this.location = options.location ?? {};
    this.hint = options.hint;
  }
}
