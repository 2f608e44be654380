/**
 * The AI SDK language-model middleware that records every model call into a stepchain run (docs/ai-sdk.md
 * "Recording the Vercel AI SDK"): the request is durable (a started model record) before the provider is
 * called; the answer completes it, and a provider error, a failed or aborted stream completes it as a failed
 * request, with what had arrived by then as its result. Nothing is added to what the provider receives: the durable ids stay on the stepchain side.
 */
import type { LanguageModelMiddleware } from 'ai';
import type { ModelCallHandle, ModelOutcome } from '../../index.js';
import { toJournalValue } from '../../runtime.js';
import { answerOf, awaitedCalls, requestFields, type ModelAnswer } from './request.js';
import { recordedToolNames, throwRefusal, type AdapterRun } from './run.js';
import { recordStream } from './stream.js';

/** The answer as the model step's outcome (the SDK's values converted to journal values here). */
function outcomeOf(answer: ModelAnswer, recorded: ReadonlySet<string>): ModelOutcome {
  // Converted in the order Run.endModel converts (meta, tool calls, result): a refusal names the same field.
  const usage = answer.usage === undefined ? undefined : toJournalValue(answer.usage, { field: 'meta/usage' });
  const toolCalls = awaitedCalls(answer.result.content, recorded);
  const outcome: ModelOutcome = { result: toJournalValue(answer.result, { field: 'result' }), toolCalls };
  if (usage !== undefined) outcome.usage = usage;
  if (answer.finishReason !== undefined) {
    outcome.finishReason = answer.finishReason.unified;
    if (answer.finishReason.raw !== undefined) outcome.meta = { finish_reason_raw: answer.finishReason.raw };
  }
  return outcome;
}

async function settle(run: AdapterRun, call: ModelCallHandle, answer: ModelAnswer): Promise<void> {
  try {
    await call.complete(outcomeOf(answer, recordedToolNames(run)));
  } catch (refused) {
    // A value the journal cannot represent: recorded as the request's error (naming the field), then thrown.
    await call.fail(refused).catch(() => undefined);
    throw refused;
  }
}

/**
 * A middleware for `wrapLanguageModel({ model, middleware: stepchainMiddleware(run) })`. Every call made
 * through the wrapped model — `generateText`, `streamText`, agents — becomes a model step of `run`.
 */
export function stepchainMiddleware(run: AdapterRun): LanguageModelMiddleware {
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate, params, model }) {
      throwRefusal(run);
      const call = await run.beginModel(requestFields(model, params));
      let result: Awaited<ReturnType<typeof doGenerate>>;
      try {
        result = await doGenerate();
      } catch (error) {
        await call.fail(error);
        throw error;
      }
      await settle(run, call, answerOf(result));
      return result;
    },
    async wrapStream({ doStream, params, model }) {
      throwRefusal(run);
      const call = await run.beginModel(requestFields(model, params));
      let result: Awaited<ReturnType<typeof doStream>>;
      try {
        result = await doStream();
      } catch (error) {
        await call.fail(error);
        throw error;
      }
      return recordStream(result, params.abortSignal, (end) =>
        end.kind === 'done'
          ? settle(run, call, end.answer)
          : run.endModel(
              call.id,
              { result: toJournalValue(end.answer.result, { field: 'result' }) },
              end.error ?? new Error('the model stream failed'),
            ),
      );
    },
  };
}
