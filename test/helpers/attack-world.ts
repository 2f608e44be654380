/**
 * The genuine run the verdict attacks start from (test/attacks/verdicts.test.ts through the CLI, and
 * test/page/attack-verdicts.test.ts on the page and the CLI side by side): three steps, a weather lookup,
 * a flight search whose call carries an API key and whose result an e-mail address, and a summary; and the
 * publication policy that withholds both.
 */
export const STEP = {
  input: { user: 'What is the weather in Lyon?' },
  model: 'gpt-4o',
  prompt: 'Use tools when needed.',
  tool_call: { name: 'get_weather', arguments: { city: 'Lyon' } },
  result: { forecast: 'sunny', high_c: 14 },
};
export const MORE = [
  {
    input: { user: 'And a flight?' },
    model: 'gpt-4o',
    prompt: 'Find a flight.',
    tool_call: {
      name: 'http',
      arguments: { url: 'https://fares.example.com/q', api_key: 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' },
    },
    result: { price: 59, contact: 'desk@fares.example.com' },
  },
  {
    input: { user: 'Summarize.' },
    model: 'gpt-4o',
    prompt: 'Answer in one sentence.',
    result: 'Sunny in Lyon; flights from 59 EUR.',
  },
];
export const POLICY = {
  rules: [
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'secrets', detectors: ['api-key', 'email'] },
  ],
};
