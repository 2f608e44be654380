/**
 * The approval requests of a chain found by what they presented (spec/APPROVALS.md §5 step 4): by the compared
 * form of the call, and by the tool's name. Every call of a run is looked up so; a scan of every request per call
 * made a chain of n requests and n calls n² steps (outsider I). Pure.
 */
import { ranFor } from './ledger-messages.js';
import type { RequestState } from './ledger-types.js';

export class RequestIndex {
  private readonly byForm = new Map<string, [string, RequestState][]>();
  private readonly byTool = new Map<unknown, [string, RequestState][]>();
  /** Per tool, its requests not yet marked by a same-tool call (markSameTool). */
  private readonly unmarked = new Map<unknown, RequestState[]>();

  /** Request `id`, of compared form `form` (null: none to compare), presenting tool `name` (absent: none in hand). */
  add(id: string, state: RequestState, form: string | null, name: unknown): void {
    if (form !== null) listed(this.byForm, form).push([id, state]);
    // A name that is an object or an array equals no other record's (as `===` compares them).
    if (name === undefined || (name !== null && typeof name === 'object')) return;
    listed(this.byTool, name).push([id, state]);
    listed(this.unmarked, name).push(state);
  }

  /** The requests that presented the call of compared form `form`, in chain order. */
  presenting(form: string | null): readonly [string, RequestState][] {
    return form === null ? [] : (this.byForm.get(form) ?? []);
  }

  /** The requests that presented tool `name`, in chain order. */
  presentingTool(name: unknown): readonly [string, RequestState][] {
    return this.byTool.get(name) ?? [];
  }

  /**
   * A call of tool `name` that is not a presented call (§5 step 4): each request of that tool whose call has not
   * run is unchecked. Each is marked at the first such call after it, not again at every later one (a request's
   * call never stops having run).
   */
  markSameTool(name: unknown): void {
    const marking = this.unmarked.get(name);
    if (marking === undefined) return;
    for (const req of marking) if (ranFor(req) === null) req.unchecked = true;
    this.unmarked.delete(name);
  }
}

/** The list `map` holds under `key`, made empty when there is none. */
function listed<K, V>(map: Map<K, V[]>, key: K): V[] {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  return list;
}
