"""An OpenAI Agents SDK agent traced by the OpenTelemetry instrumentation for it
(opentelemetry-instrumentation-openai-agents), with a scripted test model, exporting through the OTLP/HTTP
protobuf exporter to wherever OTEL_EXPORTER_OTLP_ENDPOINT points. No stepchain code."""
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from agents import Agent, ModelResponse, Runner, Usage, function_tool, generation_span, set_trace_processors
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

# The SDK's own exporter sends to OpenAI's servers; the test reaches none, so only the instrumentation listens.
set_trace_processors([])
OpenAIAgentsInstrumentor().instrument()


class ScriptedModel(Model):
    """The test model: asks for the forecast tool once, then answers. Like any model that is not OpenAI's own,
    it reports each call as a generation span."""

    def __init__(self):
        self.turn = 0

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
        self.turn += 1
        with generation_span(model='scripted', input=input if isinstance(input, list) else [{'role': 'user', 'content': input}]) as span:
            if self.turn == 1:
                out = [ResponseFunctionToolCall(id='fc_1', call_id='call_1', name='forecast', arguments='{"city":"Paris"}', type='function_call', status='completed')]
            else:
                out = [ResponseOutputMessage(id='msg_1', role='assistant', status='completed', type='message', content=[ResponseOutputText(text='Sunny in Paris.', type='output_text', annotations=[])])]
            span.span_data.output = [o.model_dump() for o in out]
            span.span_data.usage = {'input_tokens': 10, 'output_tokens': 3}
        return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=10, output_tokens=3, total_tokens=13), response_id=f'resp_{self.turn}')

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


@function_tool
def forecast(city: str) -> str:
    """The forecast for a city."""
    return f'sunny in {city}'


agent = Agent(name='weather', instructions='Answer in one sentence.', model=ScriptedModel(), tools=[forecast])
result = Runner.run_sync(agent, 'What is the weather in Paris?')
print(result.final_output)
provider.shutdown()
