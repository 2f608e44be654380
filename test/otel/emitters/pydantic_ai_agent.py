"""A pydantic-ai agent with its own OpenTelemetry instrumentation and its test model, exporting through
the OTLP/HTTP protobuf exporter to wherever OTEL_EXPORTER_OTLP_ENDPOINT points. No stepchain code."""
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

Agent.instrument_all()
agent = Agent(TestModel(), name='weather', system_prompt='Answer in one sentence.')


@agent.tool_plain
def forecast(city: str) -> str:
    """The forecast for a city."""
    return f'sunny in {city}'


result = agent.run_sync('What is the weather in Paris?')
print(result.output)
provider.shutdown()
