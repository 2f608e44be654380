"""A pydantic-ai agent recorded by StepPersistence(store=StepchainStepStore(root)) whose second tool kills the process
mid-call (SIGKILL-like: os._exit, no hook runs). FunctionModel: no model is called."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pydantic_ai import Agent, RunContext  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai_harness.step_persistence import StepPersistence, annotate_tool_effect  # noqa: E402

from stepchain.pydantic_ai import StepchainStepStore  # noqa: E402

root, mode = sys.argv[1], sys.argv[2]


def model(messages, info: AgentInfo) -> ModelResponse:
    returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    if not returns:
        return ModelResponse(parts=[ToolCallPart("lookup", {"q": "invoice 7"}, tool_call_id="call-lookup")])
    if len(returns) == 1:
        return ModelResponse(parts=[ToolCallPart("pay", {"invoice": 7, "amount": 120}, tool_call_id="call-pay")])
    return ModelResponse(parts=[TextPart("paid")])


store = StepchainStepStore(root, fsync="none")
agent = Agent(FunctionModel(model), name="payer", capabilities=[StepPersistence(store=store, agent_name="payer")])


@agent.tool_plain
def lookup(q: str) -> str:
    return "invoice 7: 120 EUR"


@agent.tool
async def pay(ctx: RunContext[None], invoice: int, amount: int) -> str:
    await annotate_tool_effect(store, ctx, idempotency_key=f"pay-{invoice}", effect_summary=f"pays {amount} EUR")
    if mode == "crash":
        os._exit(137)  # killed mid-tool: the payment's outcome is unknown
    return "paid"


result = agent.run_sync("pay invoice 7", conversation_id="conv-7")
print(result.output)
