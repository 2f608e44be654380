/**
 * How `log` names what a record holds (src/cli/log-lines.ts, issue 37): the model as provider/model id for
 * each adapter's shape, an error as `Name: message`, a framework's answer by its text, a LangGraph record by
 * its thread and checkpoint — and, for shapes it does not know, the value's JSON rather than nothing.
 */
import { describe, expect, test } from 'vitest';
import { answerText, errorText, langGraphLine, modelLabel } from '../../src/cli/log-lines.js';
import type { StepRecord } from '../../src/index.js';

describe('modelLabel', () => {
  test.each([
    ['a string', 'gpt-4o', 'gpt-4o'],
    ['AI SDK {provider, modelId}', { provider: 'openai.chat', modelId: 'gpt-4o-mini' }, 'openai.chat/gpt-4o-mini'],
    ['OpenAI Agents {name}', { name: 'gpt-4.1' }, 'gpt-4.1'],
    ['LangChain {provider, name}', { provider: 'anthropic', name: 'claude-sonnet' }, 'anthropic/claude-sonnet'],
    ['no provider', { provider: '', modelId: 'm' }, 'm'],
    ['an unknown shape: its JSON', { family: 'x' }, '{"family":"x"}'],
    ['null', null, 'null'],
  ])('%s', (_name, model, shown) => {
    expect(modelLabel(model as never, 40)).toBe(shown);
  });

  test('a long id is shortened in the middle', () => {
    expect(modelLabel({ provider: 'p', modelId: 'x'.repeat(100) }, 20)).toMatch(/^p\/x+…x+$/);
  });
});

describe('errorText', () => {
  test.each([
    ['an error object', { name: 'Timeout', message: 'no answer in 5 s' }, 'Timeout: no answer in 5 s'],
    ['a message only', { message: 'declined' }, 'declined'],
    ['a string', 'boom', 'boom'],
    ['anything else: its JSON', { code: 42 }, '{"code":42}'],
  ])('%s', (_name, error, shown) => {
    expect(errorText(error as never, 80)).toBe(shown);
  });
});

describe('answerText', () => {
  test.each([
    [
      'AI SDK content parts',
      {
        content: [
          { type: 'text', text: 'It is' },
          { type: 'tool-call', toolName: 'x' },
          { type: 'text', text: 'sunny.' },
        ],
        finishReason: 'stop',
      },
      '"It is sunny."',
    ],
    [
      'OpenAI Agents output items',
      { output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi!' }] }], responseId: 'r1' },
      '"Hi!"',
    ],
    ['a plain string', 'done', '"done"'],
    [
      'an answer of tool calls only: no text (log names the calls from tool_call)',
      { content: [{ type: 'tool-call', toolName: 'x' }] },
      '',
    ],
    ['any other object: its JSON', { answer: 42 }, '{"answer":42}'],
  ])('%s', (_name, result, shown) => {
    expect(answerText(result as never, 200)).toBe(shown);
  });
});

describe('langGraphLine', () => {
  const stored = (v: unknown) => ({ type: 'json', text: JSON.stringify(v) });
  const step = (input: unknown, result: unknown) =>
    ({ v: 1, seq: 0, input, model: null, prompt: null, tool_call: null, result }) as unknown as StepRecord;

  test('a checkpoint: its thread, id, source and step, parent and channels', () => {
    const line = langGraphLine(
      step(
        {
          kind: 'langgraph.checkpoint',
          thread_id: 't-1',
          checkpoint_ns: 'sub:1',
          checkpoint_id: 'c2',
          parent: { checkpoint_id: 'c1', seq: 0, step_hash: null },
          checkpoint: stored({}),
          metadata: stored({ source: 'loop', step: 1 }),
        },
        { channel_values: { messages: { version: 2, value: stored([]) } } },
      ),
      200,
    );
    expect(line).toEqual({
      kind: 'langgraph.checkpoint',
      text: 'thread t-1 (namespace sub:1): checkpoint c2, loop step 1, parent at seq 0; channels messages',
    });
  });

  test('writes: the thread, the channels, the task and the checkpoint', () => {
    const line = langGraphLine(
      step(
        {
          kind: 'langgraph.writes',
          thread_id: 't-1',
          checkpoint_ns: '',
          checkpoint_id: 'c2',
          task_id: 'task-9',
          task_path: '',
        },
        {
          writes: [
            { idx: 0, channel: 'messages', value: stored('x') },
            { idx: -3, channel: '__interrupt__', value: stored({}) },
          ],
        },
      ),
      200,
    );
    expect(line).toEqual({
      kind: 'langgraph.writes',
      text: 'thread t-1: writes to messages, __interrupt__ by task task-9, for checkpoint c2',
    });
  });

  test('any other step is none', () => {
    expect(langGraphLine(step({ kind: 'other' }, null), 200)).toBeNull();
    expect(langGraphLine(step('langgraph.checkpoint', null), 200)).toBeNull();
  });
});
