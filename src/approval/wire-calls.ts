/**
 * The calls a recorded `tool_call` value holds, in the shapes a call is written in (spec/APPROVALS.md §5 step 4,
 * "Calls in wire shapes"): an object, or every object at any depth of nested arrays, each read as
 * `{name, arguments}` — stepchain's own shape, OpenAI Chat's `{type: "function", function: {name, arguments}}`,
 * and a call whose name is `toolName` or whose arguments are `input` or `args` (the AI SDK's, LangChain's and
 * Anthropic's), inside any wrapper (a chat message, `{"call": …}`). Read without recursion, and bounded: past
 * MAX_CALLS values a record's calls are not in hand. Pure.
 */
import { PART } from './calls.js';

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The most calls one record is read for; past it, one call not in hand stands for the rest (§5 step 5). */
export const MAX_CALLS = 10_000;
/** What stands for calls a record holds past MAX_CALLS: a call not in hand (calls.ts callIsHidden). */
const UNREAD: Rec = Object.freeze({ '$stepchain:unread': true });
/**
 * What stands for a part reference where calls are read — the whole value, an element, a wrapper's member: the
 * calls its content holds are not in the line (PARTS.md §3), so they are not in hand (§5 step 5). Read as a
 * wrapper, the reference showed no call at all, and a denied call stored as a part was "never executed"
 * (outsider E).
 */
const IN_A_PART: Rec = Object.freeze({ '$stepchain:in-a-part': true });

/** Whether `o` is a part reference standing for a whole value (its only member the reference). */
const isPartReference = (o: Rec): boolean => {
  const keys = Object.keys(o);
  return keys.length === 1 && keys[0] === PART;
};

/**
 * Whether an object inside a tool_call (not the value itself) is read as a call: it names a tool (`name`,
 * `toolName`), is OpenAI Chat's function wrapper, or holds a marker as a member (not in hand). Any other object
 * — a chat message, `{"call": …}` — is a wrapper whose members are read in turn.
 */
function callLike(o: Rec): boolean {
  if ('name' in o || 'toolName' in o || isObj(o.function)) return true;
  return Object.keys(o).some((k) => k.startsWith('$stepchain:') && k !== PART);
}

/**
 * Every call in a tool_call value, each as wireCall reads it: the value itself when it is an object, each object
 * at any depth of nested arrays (as before: `[[call]]`), and every call-like object at any depth of its objects and arrays (an OpenAI Chat assistant message's `tool_calls`, an
 * Anthropic message's `tool_use` blocks, a LangChain AIMessage's `tool_calls`, any `{"call": …}` wrapper). A
 * call's own arguments are its values, not calls. Depth-first in document order, without recursion, at most
 * MAX_CALLS values read.
 */
export function callsIn(tc: unknown): Rec[] {
  const out: Rec[] = [];
  const stack: { v: unknown; top: boolean }[] = [{ v: tc, top: true }];
  let visited = -1; // the value itself is not counted: MAX_CALLS of what it holds are read
  while (stack.length > 0) {
    const { v, top } = stack.pop()!;
    if (++visited > MAX_CALLS) {
      out.push(UNREAD);
      break;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], top }); // [[call]]: each element a call
      continue;
    }
    if (!isObj(v)) continue;
    if (isPartReference(v)) {
      out.push(IN_A_PART);
      continue;
    }
    let skip: unknown[] = [];
    if (top || callLike(v)) {
      const call = wireCall(v);
      out.push(call);
      // Not read again: the call's arguments (data), and the function object it was read from.
      skip = call === v ? [v.arguments, v.input, v.args] : [call, call.arguments];
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const x = v[keys[i]!];
      if ((isObj(x) || Array.isArray(x)) && !skip.includes(x)) stack.push({ v: x, top: false });
    }
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
