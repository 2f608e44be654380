/**
 * The calls a recorded `tool_call` value holds, in the shapes a call is written in (spec/APPROVALS.md §5 step 4,
 * "Calls in wire shapes"): an object, or every object at any depth of nested arrays, each read as
 * `{name, arguments}` — stepchain's own shape, OpenAI Chat's `{type: "function", function: {name, arguments}}`,
 * and a call whose name is `toolName` or whose arguments are `input` or `args` (the AI SDK's, LangChain's and
 * Anthropic's). Read without recursion, and bounded: past MAX_CALLS a record's calls are not in hand. Pure.
 */
import { PART } from './calls.js';

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The most calls one record is read for; past it, one call not in hand stands for the rest (§5 step 5). */
export const MAX_CALLS = 10_000;
/** What stands for calls a record holds past MAX_CALLS: a call not in hand (calls.ts callIsHidden). */
const UNREAD: Rec = Object.freeze({ '$stepchain:unread': true });

/** Every call in a tool_call value (an object, or the objects at any depth of arrays), each as wireCall reads it. */
export function callsIn(tc: unknown): Rec[] {
  if (isObj(tc)) return [wireCall(tc)];
  if (!Array.isArray(tc)) return [];
  const out: Rec[] = [];
  // Depth-first, in document order: a stack of [array, next index].
  const stack: [unknown[], number][] = [[tc, 0]];
  let visited = 0;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top[1] >= top[0].length) {
      stack.pop();
      continue;
    }
    const v = top[0][top[1]++];
    if (++visited > MAX_CALLS) {
      out.push(UNREAD);
      break;
    }
    if (isObj(v)) out.push(wireCall(v));
    else if (Array.isArray(v)) stack.push([v, 0]);
  }
  return out;
}

/**
 * A call object as `{name, arguments}`: itself where it has that shape (or holds a marker as a member: not in
 * hand), else the call its wire shape carries. `arguments` is left out where the call holds none of its members.
 */
export function wireCall(o: Rec): Rec {
  const keys = Object.keys(o);
  if (keys.some((k) => k.startsWith('$stepchain:') && k !== PART)) return o;
  if (!('name' in o) && isObj(o.function)) return o.function;
  if ('name' in o && 'arguments' in o) return o;
  const name = 'name' in o ? o.name : o.toolName;
  const at = ['arguments', 'input', 'args'].find((k) => k in o);
  if (name === o.name && at === undefined) return o;
  return at === undefined ? { name } : { name, arguments: o[at] };
}
