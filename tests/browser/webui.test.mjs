#!/usr/bin/env node
// Browser tests of hearth-server's built-in web chat page (webui/), driving the system
// Chromium through playwright-core (the harness, preconditions and helpers are in harness.mjs).
// Run by CTest as `webui_browser_test`; by hand:
//
//   HEARTH_BIN_DIR=build/bin HEARTH_BROWSER_NODE_MODULES=.cache/browser/node_modules \
//     node tests/browser/webui.test.mjs
//
// Environment (all optional; defaults relative to this file's repository):
//   HEARTH_BIN_DIR               directory holding hearth-server and hearth-synth (build/bin)
//   HEARTH_SHARED_DIR            the shared fixtures (<repo>/../shared; needs models/stories260K.gguf)
//   HEARTH_SOURCE_DIR            the repository root (for tests/server/hub/mock_hub.py)
//   HEARTH_BROWSER_NODE_MODULES  node_modules holding playwright-core (scripts/fetch-test-data.sh
//                                installs it into <cache>/browser/node_modules)
//   HEARTH_SCREENSHOT_DIR        where the PNGs of the main page states go
//   HEARTH_CHROMIUM              the browser executable (/usr/bin/chromium)
//   HEARTH_UI_PATH               serve the page from this directory (--path) instead of the
//                                embedded copy, e.g. a fresh `vite build --outDir` (unset: embedded;
//                                the --api-key test always uses the embedded page)
// Exits 77 (CTest: skipped) when Chromium, playwright-core or the model is missing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

import {
  SOURCE_DIR,
  MODEL,
  SYNTH_BIN,
  MOCK_HUB,
  UI_PATH,
  test,
  before,
  after,
  assert,
  WORK_DIR,
  browser,
  sleep,
  poll,
  spawnTracked,
  startServer,
  runToCompletion,
  mainServer,
  OPERATOR_UI_CONFIG,
  screenshotPath,
  withPage,
  openChat,
  trimmedText,
  send,
  waitForAnswer,
  assertAnswered,
  captureCompletions,
  openSettings,
  saveSettings,
  slotsProcessing,
} from './harness.mjs';
// Images and audio (attach, paste, drop, storage, export): their tests run in this same process.
import './media.test.mjs';

// --- Serving options (plain HTTP) -------------------------------------------------------------
test('the page is served at / (gzip, ETag); --no-ui and --path change that; /props reports it', { timeout: 60_000 }, async () => {
  const page = await fetch(mainServer.url, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') || '', /^text\/html/);
  assert.match(await page.text(), /<div id="app">/);
  if (!UI_PATH) { // --path files are served as they are (no gzip, no ETag)
    assert.equal(page.headers.get('content-encoding'), 'gzip');
    const etag = page.headers.get('etag');
    assert.ok(etag, 'no ETag on /');
    const again = await fetch(mainServer.url, { headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } });
    assert.equal(again.status, 304, 'a matching If-None-Match is not answered 304');
  }

  const props = await (await fetch(`${mainServer.url}props`)).json();
  assert.equal(props.ui, true, '/props ui is not true with the embedded page');
  assert.deepEqual(props.ui_settings, OPERATOR_UI_CONFIG, '/props ui_settings is not the --ui-config object');

  const noUi = await startServer('hearth-server --no-ui', ['-m', MODEL, '--no-ui'], { uiOverride: false });
  try {
    assert.equal((await fetch(noUi.url)).status, 404, '/ is served despite --no-ui');
    const noUiProps = await (await fetch(`${noUi.url}props`)).json();
    assert.equal(noUiProps.ui, false, '/props ui is not false with --no-ui');
  } finally {
    await noUi.stop();
  }

  const staticDir = path.join(WORK_DIR, 'static');
  fs.mkdirSync(staticDir, { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><p>served from --path</p>\n');
  const withPath = await startServer('hearth-server --path', ['-m', MODEL, '--path', staticDir], { uiOverride: false });
  try {
    const response = await fetch(withPath.url);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /served from --path/);
  } finally {
    await withPath.stop();
  }
});

// --- 1. Send and stream ---------------------------------------------------------------------------
test('sending a message streams the answer', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page, context) => {
    // Record every value data-streaming takes on assistant messages (the model is too fast
    // to catch "true" by polling).
    await context.addInitScript(() => {
      window.__streamingStates = [];
      const record = () => {
        const all = document.querySelectorAll('[data-testid="message-assistant"]');
        const value = all.length ? all[all.length - 1].getAttribute('data-streaming') : null;
        const states = window.__streamingStates;
        if (value !== null && states[states.length - 1] !== value) states.push(value);
      };
      new MutationObserver(record).observe(document, {
        subtree: true, childList: true, attributes: true, attributeFilter: ['data-streaming'],
      });
    });
    await openChat(page, mainServer);
    await page.getByText('How can I help?').waitFor();
    await page.screenshot({ path: screenshotPath('01-empty-page') });

    await send(page, 'Tell me a story about a little fox.');
    const answer = await waitForAnswer(page, 1);
    assertAnswered(answer);
    const states = await page.evaluate(() => window.__streamingStates);
    assert.deepEqual(states, ['true', 'false'], 'data-streaming did not go true -> false');
    assert.match(answer.stats, /^\d+ tokens? · [\d.]+ tokens\/s$/, `stats "${answer.stats}" show no tokens/s`);
    const message = page.getByTestId('message-assistant').last();
    assert.equal(await message.locator('.message-model').textContent(), 'stories260K.gguf');
    assert.equal(await page.getByTestId('model-name').textContent(), 'stories260K.gguf');
    // The sidebar names the build, as /props build_info says it (b<release>-<commit>).
    const buildInfo = (await (await fetch(`${mainServer.url}props`)).json()).build_info;
    assert.match(buildInfo, /^b10621-([0-9a-f]{8}|unknown)$/);
    assert.equal(await trimmedText(page.getByTestId('build-info')), `Hearth ${buildInfo}`);
    assert.equal(await trimmedText(page.getByTestId('message-user').getByTestId('message-content')),
      'Tell me a story about a little fox.');
    assert.match(await page.getByTestId('context-usage').textContent(), /^Context: [1-9]\d* \/ \d+ \(\d+%\)$/);
    assert.equal(await page.getByTestId('conversation-item').count(), 1);
    assert.equal(await page.getByTestId('conversation-item').textContent(), 'Tell me a story about a little fox.');
    assert.equal(await page.getByTestId('composer-input').inputValue(), '', 'the composer was not cleared');
    await page.screenshot({ path: screenshotPath('02-streamed-answer') });
  });
});

// --- 3. Persistence -----------------------------------------------------------------------------
test('the conversation survives a reload', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    await openChat(page, mainServer);
    await send(page, 'Once upon a time');
    const answer = await waitForAnswer(page, 1);
    assertAnswered(answer);
    // Saving is throttled; wait until the finished answer is in localStorage.
    await poll(() => page.evaluate(() => {
      const list = JSON.parse(localStorage.getItem('hearth.conversations') || '[]');
      const last = list[0]?.messages?.at(-1);
      return last && last.role === 'assistant' && last.content && last.timings;
    }), { what: 'the conversation to be saved to localStorage' });

    await page.reload();
    await page.getByTestId('message-assistant').waitFor();
    const items = page.getByTestId('conversation-item');
    assert.equal(await items.count(), 1);
    assert.equal(await items.textContent(), 'Once upon a time');
    assert.equal(await items.getAttribute('data-active'), 'true');
    assert.equal(await trimmedText(page.getByTestId('message-user').getByTestId('message-content')), 'Once upon a time');
    const restored = page.getByTestId('message-assistant');
    assert.equal(await restored.count(), 1);
    assert.equal(await restored.getByTestId('message-content').textContent(), answer.content);
    assert.equal(await restored.getByTestId('message-stats').textContent(), answer.stats);

    // A new chat empties the view; selecting the saved one brings it back.
    await page.getByTestId('new-chat').click();
    await page.getByText('How can I help?').waitFor();
    assert.equal(await page.getByTestId('message-user').count(), 0);
    await items.first().click();
    await page.getByTestId('message-assistant').waitFor();
    assert.equal(await page.getByTestId('message-assistant').getByTestId('message-content').textContent(), answer.content);
  });
});

// --- 4. Edit and regenerate -----------------------------------------------------------------------
test('editing a message and regenerating an answer re-request the model', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    const requests = captureCompletions(page);
    await openChat(page, mainServer);
    await send(page, 'first question');
    assertAnswered(await waitForAnswer(page, 1), 'the first answer');
    await send(page, 'second question');
    assertAnswered(await waitForAnswer(page, 2), 'the second answer');
    assert.equal(requests.length, 2);
    assert.deepEqual(requests[1].body.messages.map((m) => m.role), ['user', 'assistant', 'user']);

    // Edit the first question: everything after it is replaced by one new answer.
    await page.getByTestId('message-user').first().getByTestId('message-edit').click();
    const editor = page.getByTestId('edit-input');
    assert.equal(await editor.inputValue(), 'first question');
    await editor.fill('edited question');
    await page.getByTestId('edit-save').click();
    await poll(() => requests.length === 3, { what: 'the request for the edited message' });
    assertAnswered(await waitForAnswer(page, 1), 'the answer to the edited message');
    assert.deepEqual(requests[2].body.messages, [{ role: 'user', content: 'edited question' }]);
    assert.equal(await page.getByTestId('message-user').count(), 1);
    assert.equal(await trimmedText(page.getByTestId('message-user').getByTestId('message-content')), 'edited question');

    // Regenerate the (last) answer: the same history is sent again, and a new message replaces it.
    const oldAnswer = await page.getByTestId('message-assistant').elementHandle();
    await page.getByTestId('regenerate').click();
    await poll(() => requests.length === 4, { what: 'the regenerate request' });
    assertAnswered(await waitForAnswer(page, 1), 'the regenerated answer');
    assert.deepEqual(requests[3].body.messages, [{ role: 'user', content: 'edited question' }]);
    assert.equal(await oldAnswer.evaluate((el) => el.isConnected), false, 'the old answer was not replaced');
    assert.equal(await page.getByTestId('message-user').count(), 1);
    assert.equal(await page.getByTestId('conversation-item').count(), 1);
  });
});

// --- 5. Settings reach the request --------------------------------------------------------------
test('the temperature set in the settings is sent with the request', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    const requests = captureCompletions(page);
    await openChat(page, mainServer);
    const dialog = await openSettings(page);
    const temperature = dialog.getByTestId('setting-temperature');
    assert.equal(await temperature.inputValue(), '');
    assert.equal(await temperature.getAttribute('placeholder'), 'server: 0.8', 'server default not shown');
    assert.equal(await dialog.getByTestId('setting-top-k').inputValue(), '7', '--ui-config top_k not applied');
    await temperature.fill('0.35');
    await page.screenshot({ path: screenshotPath('04-settings-dialog') });
    await saveSettings(page);
    const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('hearth.settings') || '{}'));
    assert.equal(stored.temperature, '0.35');

    await send(page, 'Hello there');
    assertAnswered(await waitForAnswer(page, 1));
    assert.equal(requests.length, 1);
    const { body } = requests[0];
    assert.equal(body.temperature, 0.35);
    assert.equal(body.top_k, 7, "the operator's --ui-config top_k is not sent");
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, undefined, 'an empty setting was sent');
  });
});

// --- 6. Markdown and code copy ----------------------------------------------------------------
const CODE = 'def add(a, b):\n    # Sum of <a> & "b"\n    return a + b';
const MARKDOWN = [
  'Here is **a function** and some `inline code`:',
  '',
  '```python',
  CODE,
  '```',
  '',
  'Raw <b>html</b> stays text.',
].join('\n');

test('Markdown is rendered, code is highlighted and its Copy button copies exactly the code', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page, context) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: mainServer.url.slice(0, -1) });
    // Seeded before the page's scripts run, so that the first render shows it.
    await context.addInitScript((markdown) => {
      const now = Date.now();
      const seed = [{
        id: 'seeded-conversation',
        title: 'Seeded Markdown',
        createdAt: now,
        updatedAt: now,
        messages: [
          { id: 'seeded-user', role: 'user', content: 'Write a Python function.', createdAt: now },
          {
            id: 'seeded-assistant', role: 'assistant', content: markdown, reasoning: '', toolCalls: [],
            model: 'seeded-model.gguf', timings: null, finishReason: 'stop', error: null, createdAt: now,
          },
        ],
      }];
      try {
        if (!localStorage.getItem('hearth.conversations')) localStorage.setItem('hearth.conversations', JSON.stringify(seed));
      } catch {
        // about:blank has no storage.
      }
    }, MARKDOWN);
    await openChat(page, mainServer);
    const answer = page.getByTestId('message-assistant');
    await answer.waitFor();
    assert.equal(await page.getByTestId('conversation-item').textContent(), 'Seeded Markdown');
    const content = answer.getByTestId('message-content');
    assert.equal(await content.locator('strong').textContent(), 'a function');
    assert.equal(await content.locator('p code').textContent(), 'inline code');
    assert.equal(await content.locator('b').count(), 0, 'raw HTML was rendered');
    assert.match(await content.textContent(), /Raw <b>html<\/b> stays text\./);

    const code = content.locator('pre code');
    assert.equal(await code.count(), 1);
    assert.match(await code.getAttribute('class'), /\bhljs\b/);
    assert.match(await code.getAttribute('class'), /\blanguage-python\b/);
    assert.ok(await code.locator('[class^="hljs-"]').count() >= 3, 'the code is not highlighted');
    assert.equal(await code.locator('.hljs-keyword').first().textContent(), 'def');
    assert.equal(await code.locator('.hljs-comment').textContent(), '# Sum of <a> & "b"');
    assert.equal(await content.locator('.code-lang').textContent(), 'python');
    await page.screenshot({ path: screenshotPath('05-markdown-code') });

    const copy = content.getByTestId('code-copy');
    await copy.click();
    await poll(async () => (await copy.textContent()) === 'Copied', { what: 'the Copy button to say "Copied"' });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), CODE);

    // The message's own Copy button copies the whole Markdown source.
    await answer.getByTestId('message-copy').click();
    await poll(async () => (await page.evaluate(() => navigator.clipboard.readText())) === MARKDOWN,
      { timeoutMs: 3_000, what: 'the whole message on the clipboard' });
  });
});

// --- 6b. The page's SSE parser (plain Node: it is a module without dependencies) ---------------
test('the SSE parser handles split chunks, CRLF/CR, data: without a space, multi-line data, comments, errors, [DONE]', async () => {
  const { createSseParser } = await import(pathToFileURL(path.join(SOURCE_DIR, 'webui', 'src', 'sse.js')).href);
  const parse = (chunks) => {
    const events = [];
    const parser = createSseParser({
      onData: (json) => events.push(['data', json]),
      onError: (error) => events.push(['error', error.message]),
      onDone: () => events.push(['done']),
    });
    for (const chunk of chunks) {
      parser.push(chunk);
      if (parser.finished) break;
    }
    if (!parser.finished) parser.end();
    return events;
  };
  const stream = [
    ': keep-alive comment\r\n\r\n',
    'data: {"a":1}\r\n\r\n',
    'data:{"b":2}\n\n', // no space after the colon
    'data: {"c":\ndata: 3}\n\n', // one event in two data lines
    'data: {"d":4}\r\r', // bare CR line ends
    'event: error\ndata: {"message":"typed error"}\n\n',
    'error: {"message":"llama.cpp style error","type":"server_error"}\n\n',
    'data: {"error":{"message":"error in data","code":500}}\n\n',
    'data: {"choices":[],"usage":{"completion_tokens":2}}\n\n', // a final chunk with usage only
    'data: [DONE]\n\n',
    'data: {"after":"done"}\n\n', // ignored
  ].join('');
  const expected = [
    ['data', { a: 1 }], ['data', { b: 2 }], ['data', { c: 3 }], ['data', { d: 4 }],
    ['error', 'typed error'], ['error', 'llama.cpp style error'], ['error', 'error in data'],
    ['data', { choices: [], usage: { completion_tokens: 2 } }], ['done'],
  ];
  assert.deepEqual(parse([stream]), expected);
  // The same stream cut at every position (mid-line, between CR and LF), and byte by byte.
  for (let cut = 1; cut < stream.length; cut++) {
    assert.deepEqual(parse([stream.slice(0, cut), stream.slice(cut)]), expected, `cut at ${cut}`);
  }
  assert.deepEqual(parse([...stream]), expected);
  // A last event without its blank line (or with a lone CR) is still delivered at the end.
  assert.deepEqual(parse(['data: {"z":1}']), [['data', { z: 1 }]]);
  assert.deepEqual(parse(['data: {"z":1}\r']), [['data', { z: 1 }]]);
  assert.deepEqual(parse(['data: not json\n\n']), []);
});

// --- 6c. Model output is inert; odd but valid streams are read right ------------------------------
// Answers /v1/chat/completions of `target` (a page or context) with `bodies` in turn, as an
// event stream; returns the list of request bodies.
async function mockCompletions(target, bodies) {
  const requests = [];
  await target.route('**/v1/chat/completions', async (route) => {
    requests.push(route.request().postDataJSON());
    const body = bodies[Math.min(requests.length, bodies.length) - 1];
    await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body });
  });
  return requests;
}

const sseData = (json) => `data: ${JSON.stringify(json)}\n\n`;
const contentChunk = (content) => ({ choices: [{ index: 0, delta: { content } }], model: 'mock-model' });

const XSS_TITLE = '<img src=x onerror="window.__xss=\'title\'"> hi';
const HOSTILE_REPLY = [
  'Hello <img src=x onerror="window.__xss=\'img\'"> <script>window.__xss="script"</script>',
  '[js link](javascript:window.__xss=\'link\') [JS](JAVASCRIPT:alert(1)) <javascript:alert(1)>',
  '[data link](data:text/html,<b>x</b>) [image data](data:image/png;base64,AAAA)',
  'and [safe](https://example.com/page).',
].join('\n');

test('model output and titles never become HTML; links are safe; a CRLF stream with odd framing is read', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    const [head, tail] = [HOSTILE_REPLY.slice(0, 40), HOSTILE_REPLY.slice(40)];
    const stream = [
      ': comment\r\n\r\n',
      `data:${JSON.stringify(contentChunk(head))}\r\n\r\n`,
      // One event split over two data lines (joined with a newline: still valid JSON).
      `data: ${JSON.stringify(contentChunk(tail)).replace('"choices":', '"choices":\ndata: ')}\n\n`,
      sseData({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      sseData({ choices: [], usage: { completion_tokens: 2 }, timings: { prompt_n: 3, predicted_n: 2, predicted_per_second: 50 } }),
      'data: [DONE]\n\n',
      sseData(contentChunk(' AFTER DONE')),
    ].join('');
    const requests = await mockCompletions(page, [stream]);
    await openChat(page, mainServer);
    await send(page, XSS_TITLE);
    const answer = await waitForAnswer(page, 1);
    assert.equal(requests.length, 1);
    assert.equal(answer.error, null, `the answer shows an error: ${answer.error}`);
    assert.equal(answer.stats, '2 tokens · 50.0 tokens/s', 'the usage-only last chunk was not applied');
    assert.doesNotMatch(answer.content, /AFTER DONE/, 'data after [DONE] was used');

    const content = page.getByTestId('message-assistant').getByTestId('message-content');
    assert.match(answer.content, /Hello <img src=x onerror="window.__xss='img'"> <script>/);
    assert.match(answer.content, /\[js link\]\(javascript:window.__xss='link'\)/);
    assert.equal(await page.locator('.messages img, .messages script, .sidebar img').count(), 0, 'markup from the model was rendered');
    const links = await content.locator('a').evaluateAll((all) => all.map((a) => ({
      href: a.getAttribute('href'), target: a.target, rel: a.rel, text: a.textContent,
    })));
    assert.deepEqual(links, [{ href: 'https://example.com/page', target: '_blank', rel: 'noopener noreferrer', text: 'safe' }]);
    // The title and the user's message stay text too.
    assert.equal(await page.getByTestId('conversation-item').textContent(), XSS_TITLE);
    assert.equal(await trimmedText(page.getByTestId('message-user').getByTestId('message-content')), XSS_TITLE);
    await page.getByText('js link').click(); // plain text: nothing happens
    await sleep(200);
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'a payload ran');
    await page.screenshot({ path: screenshotPath('05b-inert-output') });
  });
});

test('reasoning is shown folded after the answer and stays as the user sets it; tool calls are shown', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    const reasoningChunk = (text) => ({ choices: [{ index: 0, delta: { reasoning_content: text } }] });
    const toolChunk = (args) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }] } }] });
    const stream = [
      sseData(reasoningChunk('The user wants ')), sseData(reasoningChunk('the weather.')),
      sseData(contentChunk('Let me check.')),
      sseData(toolChunk('{"city":')), sseData(toolChunk('"Paris"}')),
      sseData({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      'data: [DONE]\n\n',
    ].join('');
    await mockCompletions(page, [stream, sseData(contentChunk('Second.')) + 'data: [DONE]\n\n']);
    await openChat(page, mainServer);
    await send(page, 'Weather in Paris?');
    const answer = await waitForAnswer(page, 1);
    assert.equal(answer.error, null);
    const reasoning = page.getByTestId('message-assistant').getByTestId('reasoning');
    assert.equal(await reasoning.getAttribute('open'), null, 'the reasoning is folded once the answer is done');
    assert.equal(await trimmedText(reasoning.getByTestId('reasoning-content')), 'The user wants the weather.');
    assert.match(answer.content, /Let me check\./);
    const call = page.getByTestId('tool-call');
    assert.match(await call.textContent(), /get_weather/);
    assert.match(await call.textContent(), /"city": "Paris"/, 'the arguments, joined and pretty-printed');
  });
});

test('reasoning the user closes and reopens while it streams stays open after the answer', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page) => {
    // A stream that arrives piece by piece (route.fulfill would deliver it at once).
    await page.addInitScript(() => {
      const realFetch = window.fetch;
      window.fetch = async (input, init) => {
        const url = typeof input === 'string' ? input : input.url;
        if (!url.includes('/v1/chat/completions') || !window.__slowStream) return realFetch(input, init);
        const encoder = new TextEncoder();
        const pieces = window.__slowStream;
        const body = new ReadableStream({
          async start(controller) {
            for (const piece of pieces) {
              await new Promise((resolve) => setTimeout(resolve, 400));
              controller.enqueue(encoder.encode(piece));
            }
            controller.close();
          },
        });
        return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      };
    });
    await openChat(page, mainServer);
    const reasoningChunk = (text) => ({ choices: [{ index: 0, delta: { reasoning_content: text } }] });
    const pieces = ['Thinking ', 'it ', 'over ', 'slowly.'].map((text) => sseData(reasoningChunk(text)));
    pieces.push(sseData(contentChunk('Done.')), 'data: [DONE]\n\n');
    await page.evaluate((list) => { window.__slowStream = list; }, pieces);
    await send(page, 'Think first.');
    const reasoning = page.getByTestId('message-assistant').getByTestId('reasoning');
    await poll(async () => (await reasoning.count()) === 1 && (await reasoning.getAttribute('open')) !== null,
      { what: 'the reasoning to show, open, while it streams' });
    await reasoning.locator('summary').click();  // closed by the user...
    await reasoning.locator('summary').click();  // ...and opened again
    await waitForAnswer(page, 1);
    assert.notEqual(await reasoning.getAttribute('open'), null, 'the reasoning the user opened was closed');
    assert.equal(await trimmedText(reasoning.getByTestId('reasoning-content')), 'Thinking it over slowly.');
  });
});

test('an error event, a stream cut before [DONE] and a full browser storage are shown as errors', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (page, context) => {
    // Saving the conversations fails as when the quota is exceeded.
    await context.addInitScript(() => {
      const setItem = Storage.prototype.setItem;
      Storage.prototype.setItem = function patchedSetItem(key, value) {
        if (key === 'hearth.conversations') {
          throw new DOMException("Setting the value of 'hearth.conversations' exceeded the quota.", 'QuotaExceededError');
        }
        return setItem.call(this, key, value);
      };
    });
    await mockCompletions(page, [
      sseData(contentChunk('partial')) + 'error: {"message":"mock failure","type":"server_error"}\n\n',
      sseData(contentChunk('cut off')),
    ]);
    await openChat(page, mainServer);
    await send(page, 'first');
    let answer = await waitForAnswer(page, 1);
    assert.equal(answer.error, 'mock failure');
    assert.equal(answer.content.trim(), 'partial');
    await send(page, 'second');
    answer = await waitForAnswer(page, 2);
    assert.equal(answer.content.trim(), 'cut off');
    assert.match(answer.error || '', /closed before the answer was complete/);
    const banner = page.locator('.banner[data-testid="error-message"]');
    await banner.waitFor({ state: 'visible' });
    assert.match(await banner.textContent(), /storage is full/i);
    // The page keeps working.
    assert.equal(await page.getByTestId('send-button').count(), 1);
  });
});

// --- 6d. Two tabs -------------------------------------------------------------------------------
test('two tabs keep both of their conversations; a deletion in one is not undone by the other', { timeout: 60_000 }, async (t) => {
  await withPage(t, async (pageA, context) => {
    await mockCompletions(context, [sseData(contentChunk('mock answer')) + 'data: [DONE]\n\n']);
    const pageB = await context.newPage();
    const errorsB = [];
    pageB.on('pageerror', (err) => errorsB.push(err.message));
    for (const page of [pageA, pageB]) page.on('dialog', (dialog) => dialog.accept());
    const titles = async (page) => (await page.getByTestId('conversation-item').allTextContents()).sort();
    const stored = (page) => page.evaluate(() =>
      JSON.parse(localStorage.getItem('hearth.conversations') || '[]').map((c) => c.title).sort());

    await openChat(pageA, mainServer);
    await openChat(pageB, mainServer);
    await send(pageA, 'from tab A');
    assertAnswered(await waitForAnswer(pageA, 1), 'tab A');
    await send(pageB, 'from tab B');
    assertAnswered(await waitForAnswer(pageB, 1), 'tab B');

    // Each tab shows the other's conversation without a reload, and storage holds both.
    const both = ['from tab A', 'from tab B'];
    await poll(async () => JSON.stringify(await titles(pageA)) === JSON.stringify(both), { what: 'tab A to list both' });
    await poll(async () => JSON.stringify(await titles(pageB)) === JSON.stringify(both), { what: 'tab B to list both' });
    await poll(async () => JSON.stringify(await stored(pageA)) === JSON.stringify(both), { what: 'storage to hold both' });
    await pageA.reload();
    await pageB.reload();
    await pageA.getByTestId('conversation-item').nth(1).waitFor();
    await pageB.getByTestId('conversation-item').nth(1).waitFor();
    assert.deepEqual(await titles(pageA), both, 'tab A lost a conversation over the reload');
    assert.deepEqual(await titles(pageB), both, 'tab B lost a conversation over the reload');

    // B deletes A's conversation: A drops it, and neither A's next save nor reloads bring it back.
    await pageB.getByTestId('conversation-item').filter({ hasText: 'from tab A' }).getByTestId('conversation-delete').click();
    await poll(async () => JSON.stringify(await titles(pageA)) === JSON.stringify(['from tab B']), { what: 'tab A to drop the deleted one' });
    await pageA.getByTestId('new-chat').click();
    await send(pageA, 'again from A');
    assertAnswered(await waitForAnswer(pageA, 1), 'tab A after the deletion');
    const after = ['again from A', 'from tab B'];
    await poll(async () => JSON.stringify(await stored(pageB)) === JSON.stringify(after), { what: 'storage after the deletion' });
    await pageA.reload();
    await pageB.reload();
    await pageA.getByTestId('conversation-item').nth(1).waitFor();
    await pageB.getByTestId('conversation-item').nth(1).waitFor();
    await sleep(1_000); // longer than the save throttle: a stale save would show now
    assert.deepEqual(await titles(pageA), after);
    assert.deepEqual(await titles(pageB), after);
    assert.deepEqual(await stored(pageA), after);
    assert.deepEqual(errorsB, [], 'tab B threw uncaught errors');
  });
});

// --- 2. Stop ------------------------------------------------------------------------------------
test('stopping mid-stream keeps the partial answer and frees the slot', { timeout: 90_000 }, async (t) => {
  // A random-weight model big enough to generate at a few dozen tokens/s on one thread.
  const slowModel = path.join(WORK_DIR, 'slow-llama.gguf');
  await runToCompletion('hearth-synth', SYNTH_BIN, [
    '-o', slowModel, '--arch', 'llama', '--n-embd', '2048', '--n-layer', '8', '--n-head', '16',
    '--n-head-kv', '4', '--n-ff', '5632', '--type', 'q4_0', '--vocab', MODEL,
  ], 60_000);
  const server = await startServer('hearth-server (slow model)', [
    '-m', slowModel, '--chat-template', 'chatml', '-np', '1', '-t', '1', '-c', '4096', '--ignore-eos',
  ]);
  try {
    await withPage(t, async (page) => {
      const requests = captureCompletions(page);
      await openChat(page, server, 'slow-llama.gguf');
      await openSettings(page);
      await page.getByTestId('setting-max-tokens').fill('4000');
      await saveSettings(page);

      await send(page, 'Write a very long story.');
      const message = page.getByTestId('message-assistant').last();
      const content = message.getByTestId('message-content');
      await poll(async () => (await content.textContent()).length >= 12,
        { timeoutMs: 20_000, what: 'some streamed text' });
      assert.equal(await message.getAttribute('data-streaming'), 'true', 'the answer finished before Stop');
      assert.equal(await slotsProcessing(server), true, 'GET /slots shows no slot processing while streaming');
      await page.getByTestId('stop-button').click();
      const stoppedAt = Date.now();

      await poll(async () => (await message.getAttribute('data-streaming')) === 'false',
        { timeoutMs: 2_000, what: 'the answer to stop streaming' });
      await poll(async () => !(await slotsProcessing(server)),
        { timeoutMs: 2_000, intervalMs: 50, what: 'GET /slots to show the slot idle after Stop' });
      console.log(`# slot idle ${Date.now() - stoppedAt} ms after Stop`);
      const partial = await content.textContent();
      assert.ok(partial.length >= 12, 'the partial answer was not kept');
      await sleep(500);
      assert.equal(await content.textContent(), partial, 'the answer kept growing after Stop');
      assert.equal(await message.locator('.badge').textContent(), 'stopped');
      assert.equal(await page.getByTestId('send-button').count(), 1, 'the Stop button did not turn back into Send');
      assert.equal(requests[0].body.max_tokens, 4000);
      await page.screenshot({ path: screenshotPath('03-stopped-answer') });
      const saved = await poll(() => page.evaluate(() => {
        const list = JSON.parse(localStorage.getItem('hearth.conversations') || '[]');
        const last = list[0]?.messages?.at(-1);
        return last && last.finishReason === 'stopped' ? last : null;
      }), { what: 'the stopped answer to be saved' });
      assert.equal(saved.content.length > 0, true);

      // The only slot is free again: a short second answer comes through.
      await openSettings(page);
      await page.getByTestId('setting-max-tokens').fill('8');
      await saveSettings(page);
      await send(page, 'And a short one.');
      const second = await waitForAnswer(page, 2, 20_000);
      assertAnswered(second, 'the answer after Stop');
      assert.match(second.stats, /^8 tokens/);
      assert.equal(await page.getByTestId('message-assistant').last().locator('.badge').textContent(), 'length limit');
      assert.equal(requests.length, 2);
      assert.deepEqual(requests[1].body.messages.map((m) => m.role), ['user', 'assistant', 'user'],
        'the stopped partial answer is not sent as history with the next message');
    });
  } finally {
    await server.stop();
    fs.rmSync(slowModel, { force: true });
  }
});

// --- 7. Loading state while the model downloads --------------------------------------------------
test('the page shows the download progress while the model loads, then becomes usable', { timeout: 90_000 }, async (t) => {
  const hubRoot = path.join(WORK_DIR, 'hub');
  const repoDir = path.join(hubRoot, 'hearth-test', 'tiny-stories');
  fs.mkdirSync(repoDir, { recursive: true });
  fs.copyFileSync(MODEL, path.join(repoDir, 'tiny-stories-Q4_K_M.gguf'));
  const portFile = path.join(WORK_DIR, 'hub.port');
  const hub = spawnTracked('mock_hub.py', 'python3', [
    MOCK_HUB, '--root', hubRoot, '--port-file', portFile, '--log', path.join(WORK_DIR, 'hub.log'),
    '--throttle', '150000', // the 1.1 MB model takes about 8 s
  ], {});
  let server = null;
  try {
    const hubPort = await poll(() => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim(),
      { what: 'the mock hub to write its port' }).catch((err) => {
      throw new Error(`${err.message}\n--- mock hub log ---\n${hub.log}`);
    });
    const cacheDir = path.join(WORK_DIR, 'hf-cache');
    fs.mkdirSync(cacheDir);
    server = await startServer('hearth-server -hf', ['-hf', 'hearth-test/tiny-stories', '--chat-template', 'chatml'], {
      env: { LLAMA_CACHE: cacheDir, MODEL_ENDPOINT: `http://127.0.0.1:${hubPort}/` },
      waitHealthy: false,
      uiOverride: false, // --path files other than the index wait for the model
    });
    // The progress appears once the hub has listed the files (the listener opens before that).
    const healthBody = await poll(async () => {
      const health = await fetch(`${server.url}health`);
      assert.equal(health.status, 503, 'the server is not loading (the download finished too early?)');
      const body = await health.json();
      return body.error?.progress ? body : null;
    }, { timeoutMs: 5_000, what: 'the download progress in /health' });
    assert.equal(healthBody.error.progress.stage, 'downloading');

    await withPage(t, async (page) => {
      await page.goto(server.url);
      const loading = page.getByTestId('loading-state');
      await loading.waitFor({ state: 'visible' });
      assert.equal(await page.getByTestId('composer-input').isDisabled(), true, 'the composer is usable while loading');
      const seen = [];
      await poll(async () => {
        const text = await loading.textContent().catch(() => '');
        const match = /(\d{1,3})%/.exec(text);
        if (match) seen.push(Number(match[1]));
        return match;
      }, { timeoutMs: 5_000, what: 'a percentage in the loading state' });
      await page.screenshot({ path: screenshotPath('06-loading-state') });
      // Follow the percentage until the overlay goes away.
      await poll(async () => {
        if (!(await loading.isVisible())) return true;
        const match = /(\d{1,3})%/.exec(await loading.textContent().catch(() => ''));
        if (match) seen.push(Number(match[1]));
        return false;
      }, { timeoutMs: 30_000, intervalMs: 200, what: 'the loading state to go away' });
      console.log(`# loading percentages seen: ${[...new Set(seen)].join(' ')}`);
      assert.ok(seen.every((value, i) => i === 0 || value >= seen[i - 1]), `the percentage went back: ${seen}`);
      assert.ok(seen.some((value) => value > 0 && value < 100), `no intermediate percentage: ${seen}`);

      const input = page.getByTestId('composer-input');
      await poll(async () => !(await input.isDisabled()), { what: 'the composer to become usable' });
      await poll(async () => (await page.getByTestId('model-name').textContent()) !== 'Connecting…',
        { what: 'the model name' });
      console.log(`# model name after download: ${await page.getByTestId('model-name').textContent()}`);
      await send(page, 'Hello after loading');
      assertAnswered(await waitForAnswer(page, 1), 'the answer after loading');
    });
  } finally {
    if (server) await server.stop();
    await hub.stop();
  }
});

// --- 8. API key -------------------------------------------------------------------------------
test('with --api-key the page asks for the key, rejects a wrong one and works with the right one', { timeout: 60_000 }, async (t) => {
  const KEY = 'browser-test-key-0123';
  const server = await startServer('hearth-server --api-key', [
    '-m', MODEL, '--chat-template', 'chatml', '-n', '64', '--api-key', KEY,
  ], { uiOverride: false }); // with --path only the index would be public
  try {
    // The page and /health are public; the API is not.
    assert.equal((await fetch(server.url, { headers: { 'accept-encoding': 'gzip' } })).status, 200);
    assert.equal((await fetch(`${server.url}health`)).status, 200);
    assert.equal((await fetch(`${server.url}props`)).status, 401);
    assert.equal((await fetch(`${server.url}v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"messages":[]}',
    })).status, 401);

    await withPage(t, async (page) => {
      const requests = captureCompletions(page);
      await page.goto(server.url);
      const prompt = page.getByTestId('api-key-prompt');
      await prompt.waitFor({ state: 'visible' });
      assert.equal(await page.getByTestId('composer-input').isDisabled(), true);
      assert.equal(await prompt.getByTestId('error-message').count(), 0, 'an error is shown before any key was tried');
      await page.screenshot({ path: screenshotPath('07-api-key-prompt') });

      await prompt.getByTestId('api-key-input').fill('wrong-key');
      await prompt.getByTestId('api-key-save').click();
      const error = prompt.getByTestId('error-message');
      await error.waitFor({ state: 'visible' });
      assert.match(await error.textContent(), /invalid api key/i);
      await page.screenshot({ path: screenshotPath('07b-api-key-wrong') });

      await prompt.getByTestId('api-key-input').fill(KEY);
      await prompt.getByTestId('api-key-save').click();
      await prompt.waitFor({ state: 'hidden' });
      await poll(async () => (await page.getByTestId('model-name').textContent()) === 'stories260K.gguf',
        { what: 'the model name after the key was accepted' });
      assert.equal(await page.evaluate(() => localStorage.getItem('hearth.apiKey')), KEY);
      await send(page, 'Hello with a key');
      assertAnswered(await waitForAnswer(page, 1), 'the answer with the right key');
      assert.equal(requests[0].headers.authorization, `Bearer ${KEY}`);
    });
  } finally {
    await server.stop();
  }
});
