// Deterministic agent steps for the benchmarks: the same seed gives the same steps on every machine, so
// every figure in a run (and across runs) is measured on identical payloads. Two shapes: a ~1.2 KB step
// (input object, model name, ~300-character prompt, a tool call with arguments, a result listing small
// items) and a "blob" step whose result carries ~100 KB of text, which the store moves into a blob.

/** mulberry32: a tiny seeded PRNG; quality is irrelevant here, determinism is the point. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'agent audit batch buffer cache chain commit config deploy digest error event fetch filter graph hash index ' +
  'journal ledger limit merge model node order parse patch query queue range record report result retry route ' +
  'schema search shard signal source state step store stream summary table token trace update verify window ' +
  'invoice customer refund shipment warehouse forecast revenue quarterly pipeline latency throughput migration'
).split(' ');
const MODELS = ['gpt-4.1-mini-2025-04-14', 'claude-sonnet-4-5', 'gemini-2.5-flash', 'llama-3.3-70b-instruct'];
const TOOLS = ['search_docs', 'sql_query', 'http_get', 'read_file', 'run_tests'];

function sentence(rand, minChars) {
  let s = '';
  while (s.length < minChars) {
    const w = WORDS[Math.floor(rand() * WORDS.length)];
    s += s.length === 0 ? w[0].toUpperCase() + w.slice(1) : ' ' + w;
    if (rand() < 0.08) s += ',';
  }
  return s + '.';
}

function hex(rand, n) {
  let s = '';
  while (s.length < n)
    s += Math.floor(rand() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, n);
}

/** Step `i` of the run seeded `seed`. `blobBytes` > 0 adds that much text to the result. */
export function makeStep(i, { seed = 1, blobBytes = 0 } = {}) {
  const rand = prng(seed * 1_000_003 + i);
  const tool = TOOLS[i % TOOLS.length];
  const items = [];
  for (let k = 0; k < 4; k++) {
    items.push({
      id: `doc-${hex(rand, 8)}`,
      title: sentence(rand, 14),
      score: Math.round(rand() * 10000) / 10000,
      tokens: 40 + Math.floor(rand() * 900),
    });
  }
  const result = {
    status: 'ok',
    items,
    total: 1 + Math.floor(rand() * 5000),
    latency_ms: 12 + Math.floor(rand() * 800),
  };
  if (blobBytes > 0) {
    // Printable, incompressible-ish text: what a fetched page or a tool's large output looks like.
    let body = '';
    while (body.length < blobBytes) body += hex(rand, 64) + ' ' + sentence(rand, 60) + '\n';
    result.body = body.slice(0, blobBytes);
  }
  return {
    input: {
      task_id: `task-${(i >>> 4).toString(36)}`,
      user: { id: `u-${hex(rand, 6)}`, locale: 'en-GB' },
      messages: [{ role: 'user', content: sentence(rand, 60) }],
      params: { temperature: 0.2, max_tokens: 1024, stream: false },
    },
    model: MODELS[i % MODELS.length],
    prompt: sentence(rand, 300),
    tool_call: {
      id: `call_${hex(rand, 16)}`,
      name: tool,
      arguments: {
        query: sentence(rand, 30),
        top_k: 6,
        filters: { lang: 'en', since: '2025-01-01', tags: ['prod', 'eu'] },
      },
    },
    result,
    meta: { agent: 'bench', attempt: 1 },
  };
}

/** `n` steps starting at `from`. */
export function makeSteps(n, options = {}, from = 0) {
  const out = new Array(n);
  for (let k = 0; k < n; k++) out[k] = makeStep(from + k, options);
  return out;
}
