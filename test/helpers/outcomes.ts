/** Small readers of what a call did, shared by the store, runtime and adapter suites. */

/** The `code` a promise rejects with (or the error as text), or 'no error' when it resolves. */
export async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
  return 'no error';
}

/** Everything an async iterable yields, in order. */
export async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
