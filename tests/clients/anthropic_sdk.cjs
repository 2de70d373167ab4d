// The official Anthropic TypeScript SDK against hearth-server's /v1/messages: create,
// stream (the event sequence), tool_use blocks, count_tokens and errors.
// Usage: node anthropic_sdk.cjs <base url>. Exits 1 when any check fails.
'use strict';
const Anthropic = require('@anthropic-ai/sdk');

const base = process.argv[2];
const client = new Anthropic({ baseURL: base, apiKey: 'none', maxRetries: 0, timeout: 60000 });
const user = (text) => [{ role: 'user', content: text }];

function check(condition, what) {
  if (!condition) throw new Error(what);
}

const checks = {
  async create() {
    const m = await client.messages.create({ model: 'm', max_tokens: 8, temperature: 0, messages: user('Once upon a time') });
    check(m.type === 'message' && m.role === 'assistant', 'a message');
    check(m.content[0].type === 'text' && m.content[0].text.length > 0, 'a text block');
    check(m.stop_reason === 'max_tokens' && m.usage.output_tokens === 8, 'stop reason and usage');
  },
  async stream() {
    const whole = await client.messages.create({ model: 'm', max_tokens: 8, temperature: 0, messages: user('Once upon a time') });
    const stream = client.messages.stream({ model: 'm', max_tokens: 8, temperature: 0, messages: user('Once upon a time') });
    const types = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    check(types[0] === 'message_start' && types[types.length - 1] === 'message_stop', `events ${types.join(',')}`);
    check(types.includes('content_block_start') && types.includes('content_block_delta') && types.includes('message_delta'), 'block events');
    check(final.content[0].text === whole.content[0].text, 'streamed text equals the answer');
  },
  async toolUse() {
    const m = await client.messages.create({
      model: 'm', max_tokens: 128, temperature: 1.0, messages: user('Weather in Paris?'),
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 10 } }, required: ['city'] } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    const uses = m.content.filter((b) => b.type === 'tool_use');
    check(uses.length === 1 && uses[0].name === 'get_weather' && typeof uses[0].input.city === 'string', 'one tool_use block');
    check(m.stop_reason === 'tool_use', `stop_reason ${m.stop_reason}`);
  },
  async countTokens() {
    const r = await client.messages.countTokens({ model: 'm', messages: user('Once upon a time') });
    check(Number.isInteger(r.input_tokens) && r.input_tokens > 4, 'input_tokens');
  },
  async errors() {
    try {
      await client.messages.create({ model: 'm', max_tokens: 8 });
      check(false, 'no error');
    } catch (e) {
      check(e instanceof Anthropic.APIError && e.status === 400, `APIError 400 (${e.constructor.name} ${e.status})`);
    }
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
