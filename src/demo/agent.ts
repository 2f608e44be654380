/**
 * A scripted travel-assistant agent for the demo: the steps a real agent would record (model prompts,
 * tool calls, tool results), deterministic so that a replay differs only where the demo changes it.
 */
import type { StepInput } from '../record/index.js';

const SYSTEM = 'You are a travel assistant. Use tools to check facts; never invent prices. Answer in two sentences.';

function flights(from: string, to: string): Record<string, unknown>[] {
  // About 100 KB of search results: the kind of tool output that belongs in a blob.
  const carriers = ['Air France', 'easyJet', 'Lufthansa', 'KLM', 'Vueling', 'ITA Airways'];
  return Array.from({ length: 420 }, (_, i) => ({
    id: `${from}-${to}-${String(i).padStart(4, '0')}`,
    carrier: carriers[i % carriers.length],
    departs: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T${String(6 + (i % 14)).padStart(2, '0')}:${i % 2 ? '30' : '05'}:00Z`,
    duration_minutes: 75 + (i % 50),
    price: { amount: 59 + ((i * 37) % 240), currency: 'EUR' },
    stops: i % 5 === 0 ? 1 : 0,
    fare_rules: 'Cabin bag included; checked bag 25 EUR; changes allowed up to 24 h before departure for a fee.',
  }));
}

export function agentRun(options: { weatherInLyon?: string } = {}): StepInput[] {
  const question =
    'I want to go from Paris to Lyon next weekend. What will the weather be, and what is the cheapest direct flight?';
  const weather = { city: 'Lyon', forecast: options.weatherInLyon ?? 'sunny', high_c: 14, low_c: 4 };
  const results = flights('CDG', 'LYS');
  const cheapest = results
    .filter((f) => f.stops === 0)
    .sort((a, b) => (a.price as { amount: number }).amount - (b.price as { amount: number }).amount)[0]!;
  return [
    {
      input: { user: question },
      model: 'gpt-4o-2024-08-06',
      prompt: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: question },
      ],
      tool_call: { name: 'get_weather', arguments: { city: 'Lyon', date: '2026-12-05' } },
      result: weather,
      meta: { latency_ms: 840, tokens: { prompt: 212, completion: 31 } },
    },
    {
      input: { observation: weather },
      model: 'gpt-4o-2024-08-06',
      prompt: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: question },
        { role: 'tool', content: JSON.stringify(weather) },
      ],
      tool_call: {
        name: 'search_flights',
        arguments: { from: 'CDG', to: 'LYS', date_from: '2026-12-04', date_to: '2026-12-06' },
      },
      result: { count: results.length, flights: results },
      meta: { latency_ms: 1210 },
    },
    {
      input: { observation: { count: results.length, cheapest_direct: cheapest.id } },
      model: 'gpt-4o-2024-08-06',
      prompt: 'Check the fare for the cheapest direct flight before quoting it.',
      tool_call: {
        name: 'http',
        arguments: {
          method: 'GET',
          url: `https://fares.example.com/v2/quote/${String(cheapest.id)}`,
          headers: { authorization: 'Bearer sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' },
          api_key: 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c',
        },
      },
      result: {
        status: 200,
        body: { flight: cheapest.id, total: cheapest.price, contact: 'bookings@fares.example.com' },
      },
    },
    {
      input: { observation: { total: cheapest.price } },
      model: 'gpt-4o-2024-08-06',
      prompt: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: question },
      ],
      tool_call: null,
      result: `Lyon will be ${weather.forecast} next weekend (${weather.low_c}–${weather.high_c} °C). The cheapest direct flight is ${String(cheapest.carrier)} ${String(cheapest.id)} at ${(cheapest.price as { amount: number }).amount} EUR.`,
      meta: { latency_ms: 530 },
    },
  ];
}

export const PLANTED_SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
