// The official OpenAI Node SDK against hearth-server: models, completions, chat (streaming
// with usage, logprobs, n=2, forced tool calls, json_schema), abort mid-stream, errors
// surfaced as APIError, and the Responses API. Usage: node openai_sdk.cjs <base url>.
// Prints one line per check and exits 1 when any fails.
'use strict';
const OpenAI = require('openai');

const base = process.argv[2];
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const user = (text) => [{ role: 'user', content: text }];
const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 10 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'days'],
    },
  },
};

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function slotsIdle() {
  const slots = await (await fetch(`${base}/slots`)).json();
  return slots.every((s) => !s.is_processing);
}

const checks = {
  async models() {
    const list = await client.models.list();
    check(list.data.length === 1 && typeof list.data[0].id === 'string', 'one model with an id');
  },
  async completions() {
    const r = await client.completions.create({ model: 'm', prompt: 'Once upon a time', max_tokens: 6, temperature: 0 });
    check(r.object === 'text_completion' && r.choices[0].text.length > 0, 'text');
    check(r.usage.completion_tokens === 6, 'usage');
  },
  async completionsStream() {
    const stream = await client.completions.create({ model: 'm', prompt: 'Once upon a time', max_tokens: 6, temperature: 0, stream: true });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0].text;
      finish = chunk.choices[0].finish_reason || finish;
    }
    check(text.length > 0 && finish === 'length', `streamed text and finish (${finish})`);
  },
  async chatStreamWithUsage() {
    const whole = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_tokens: 8, temperature: 0 });
    const stream = await client.chat.completions.create({
      model: 'm', messages: user('Hi'), max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      if (chunk.choices.length > 0) text += chunk.choices[0].delta.content || '';
      if (chunk.usage) usage = chunk.usage;
    }
    check(text === whole.choices[0].message.content, 'streamed text equals the answer');
    check(usage && usage.completion_tokens === 8, 'usage chunk');
  },
  async logprobs() {
    const r = await client.chat.completions.create({
      model: 'm', messages: user('Hi'), max_tokens: 3, temperature: 0, logprobs: true, top_logprobs: 2,
    });
    const content = r.choices[0].logprobs.content;
    check(content.length === 3 && content[0].top_logprobs.length === 2, 'three entries of two');
    check(typeof content[0].logprob === 'number' && Array.isArray(content[0].bytes), 'entry shape');
  },
  async twoChoices() {
    const r = await client.chat.completions.create({ model: 'm', messages: user('Hi'), max_tokens: 4, temperature: 0, n: 2 });
    check(r.choices.length === 2 && r.choices[1].index === 1, 'two choices');
  },
  async requiredToolCall() {
    const r = await client.chat.completions.create({
      model: 'm', messages: user('Weather in Paris?'), tools: [weather], tool_choice: 'required',
      parallel_tool_calls: false, max_tokens: 128, temperature: 1.0, seed: 7,
    });
    const calls = r.choices[0].message.tool_calls;
    check(calls && calls.length === 1, 'one tool call');
    const args = JSON.parse(calls[0].function.arguments);
    check(calls[0].function.name === 'get_weather' && typeof args.city === 'string' && Number.isInteger(args.days), 'arguments');
    check(r.choices[0].finish_reason === 'tool_calls', `finish_reason ${r.choices[0].finish_reason}`);
  },
  async jsonSchema() {
    const r = await client.chat.completions.create({
      model: 'm', messages: user('How are you?'), max_tokens: 64, temperature: 0,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'mood', schema: { type: 'object', properties: { mood: { enum: ['happy', 'sad'] } }, required: ['mood'], additionalProperties: false } },
      },
    });
    const value = JSON.parse(r.choices[0].message.content);
    check(value.mood === 'happy' || value.mood === 'sad', 'schema answer');
  },
  async abortMidStream() {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', messages: user('Once upon a time'), max_tokens: 1800, temperature: 0.8, stream: true },
      { signal: controller.signal });
    let chunks = 0;
    try {
      for await (const chunk of stream) {
        if (++chunks === 3) controller.abort();
      }
    } catch (e) {
      check(e.name === 'AbortError' || e instanceof OpenAI.APIUserAbortError, `abort error (${e.name})`);
    }
    const deadline = Date.now() + 1000;
    let idle = await slotsIdle();
    while (!idle && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      idle = await slotsIdle();
    }
    check(idle, 'the slot is free within a second');
  },
  async badRequestIsAPIError() {
    try {
      await client.chat.completions.create({ model: 'm', messages: 'hello' });
      check(false, 'no error');
    } catch (e) {
      check(e instanceof OpenAI.APIError && e.status === 400, `APIError 400 (${e.constructor.name} ${e.status})`);
      check(/messages/.test(e.message), 'message names messages');
    }
  },
  async responses() {
    const r = await client.responses.create({ model: 'm', input: 'Once upon a time', max_output_tokens: 8, temperature: 0 });
    check(r.status === 'completed' && r.output_text.length > 0, 'output_text');
    const stream = await client.responses.create({ model: 'm', input: 'Once upon a time', max_output_tokens: 8, temperature: 0, stream: true });
    const types = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    check(types[0] === 'response.created' && types[types.length - 1] === 'response.completed', `events ${types.join(',')}`);
    check(text === r.output_text, 'streamed text equals the answer');
  },
};

(async () => {
  let failed = 0;
  for (const [name, run] of Object.entries(checks)) {
    try {
      await run();
      console.log(`ok   ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.message}`);
    }
  }
  process.exit(failed === 0 ? 0 : 1);
})();
