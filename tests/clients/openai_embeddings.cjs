// The official OpenAI Node SDK's embeddings.create against a hearth-server started with
// --embedding: the SDK's default (it asks for base64 and decodes the float32 bytes), an
// explicit float request, a list of inputs, and an error surfaced as APIError.
// Usage: node openai_embeddings.cjs <base url>. Prints one line per check; exits 1 on failure.
'use strict';
const OpenAI = require('openai');

const base = process.argv[2];
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60000 });

function check(condition, what) {
  if (!condition) throw new Error(what);
}

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

const checks = {
  async base64ByDefault() {
    const r = await client.embeddings.create({ model: 'my-embedder', input: 'Once upon a time' });
    check(r.object === 'list' && r.model === 'my-embedder', 'list echoing the model');
    const v = r.data[0].embedding;
    check(Array.isArray(v) && v.length > 0, 'decoded to numbers');
    check(Math.abs(norm(v) - 1) < 1e-4, `unit length (${norm(v)})`);
    check(r.usage.prompt_tokens > 0 && r.usage.total_tokens === r.usage.prompt_tokens, 'usage');
  },
  async floatEqualsBase64() {
    const f = await client.embeddings.create({ model: 'm', input: 'Lily', encoding_format: 'float' });
    const b = await client.embeddings.create({ model: 'm', input: 'Lily', encoding_format: 'base64' });
    const x = f.data[0].embedding;
    // Asked for explicitly, base64 comes back as the string: little-endian float32 bytes.
    check(typeof b.data[0].embedding === 'string', 'base64 text');
    const bytes = Buffer.from(b.data[0].embedding, 'base64');
    const y = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    check(x.length === y.length, 'same width');
    check(x.every((v, i) => Math.fround(v) === y[i]), 'same float32 values');
  },
  async listOfInputs() {
    const r = await client.embeddings.create({ model: 'm', input: ['a', 'bb', 'ccc'] });
    check(r.data.length === 3 && r.data.every((d, i) => d.index === i && d.object === 'embedding'), 'three in order');
  },
  async errorIsApiError() {
    try {
      await client.embeddings.create({ model: 'm', input: 'x', encoding_format: 'int8' });
      check(false, 'an error');
    } catch (e) {
      check(e instanceof OpenAI.APIError && e.status === 400, `400 APIError (${e.status})`);
    }
  },
};

(async () => {
  let failed = 0;
  for (const [name, fn] of Object.entries(checks)) {
    try {
      await fn();
      console.log(`ok ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.message}`);
    }
  }
  process.exit(failed ? 1 : 0);
})();
