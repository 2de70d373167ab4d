#!/usr/bin/env node
// Browser tests of hearth-server's built-in web chat page (webui/), driving the system
// Chromium through playwright-core. Run by CTest as `webui_browser_test`; by hand:
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
// Exits 77 (CTest: skipped) when Chromium, playwright-core or the model is missing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SKIP_CODE = 77;
const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const SOURCE_DIR = path.resolve(process.env.HEARTH_SOURCE_DIR || path.join(SCRIPT_DIR, '..', '..'));
const SHARED_DIR = path.resolve(process.env.HEARTH_SHARED_DIR || path.join(SOURCE_DIR, '..', 'shared'));
const BIN_DIR = path.resolve(process.env.HEARTH_BIN_DIR || path.join(SOURCE_DIR, 'build', 'bin'));
const NODE_MODULES = path.resolve(process.env.HEARTH_BROWSER_NODE_MODULES
  || path.join(SOURCE_DIR, '.cache', 'browser', 'node_modules'));
const SCREENSHOT_DIR = path.resolve(process.env.HEARTH_SCREENSHOT_DIR
  || path.join(os.tmpdir(), 'hearth-browser-screenshots'));
const CHROMIUM = process.env.HEARTH_CHROMIUM || '/usr/bin/chromium';
const MODEL = path.join(SHARED_DIR, 'models', 'stories260K.gguf');
const SERVER_BIN = path.join(BIN_DIR, 'hearth-server');
const SYNTH_BIN = path.join(BIN_DIR, 'hearth-synth');
const MOCK_HUB = path.join(SOURCE_DIR, 'tests', 'server', 'hub', 'mock_hub.py');
const WHOLE_RUN_LIMIT_MS = 240_000;

function skip(reason) {
  console.log(`webui_browser_test: SKIPPED: ${reason}`);
  process.exit(SKIP_CODE);
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// --- Preconditions: skip (never pass) when the environment cannot run the tests ---------------
if (!isExecutable(CHROMIUM)) skip(`no Chromium at ${CHROMIUM} (install Debian's chromium package)`);
const PLAYWRIGHT_DIR = path.join(NODE_MODULES, 'playwright-core');
if (!fs.existsSync(path.join(PLAYWRIGHT_DIR, 'package.json'))) {
  skip(`playwright-core is not installed in ${NODE_MODULES} (run scripts/fetch-test-data.sh)`);
}
if (!fs.existsSync(MODEL)) skip(`model ${MODEL} is missing (set HEARTH_SHARED_DIR)`);
if (!isExecutable(SERVER_BIN)) {
  console.error(`webui_browser_test: FAILED: no hearth-server in ${BIN_DIR} (set HEARTH_BIN_DIR)`);
  process.exit(1);
}

// node:test is loaded only now, so that a skip above exits before any test is registered.
const { test, before, after } = await import('node:test');
const { default: assert } = await import('node:assert/strict');
const { chromium } = await import(pathToFileURL(path.join(PLAYWRIGHT_DIR, 'index.mjs')).href);
const PLAYWRIGHT_VERSION = JSON.parse(fs.readFileSync(path.join(PLAYWRIGHT_DIR, 'package.json'), 'utf8')).version;

fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
for (const name of fs.readdirSync(SCREENSHOT_DIR)) {
  if (/^failed-.*\.png$/.test(name)) fs.rmSync(path.join(SCREENSHOT_DIR, name), { force: true });
}
const WORK_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-browser-'));

// --- Child processes: every one is killed on the way out, whatever happens ---------------------
const children = new Set();

function killAll() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  children.clear();
}

function cleanUp() {
  killAll();
  try {
    fs.rmSync(WORK_DIR, { recursive: true, force: true });
  } catch {
    // Best effort.
  }
}

let browser = null;

process.on('exit', cleanUp);
for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]]) {
  process.on(signal, () => {
    killAll();
    // Give the browser a moment to shut down cleanly; playwright kills it on exit anyway.
    const closing = browser ? browser.close().catch(() => {}) : Promise.resolve();
    Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 2_000))]).finally(() => {
      cleanUp();
      process.exit(128 + number);
    });
  });
}
setTimeout(() => {
  console.error(`webui_browser_test: FAILED: the whole run took over ${WHOLE_RUN_LIMIT_MS / 1000} s`);
  cleanUp();
  process.exit(1);
}, WHOLE_RUN_LIMIT_MS).unref();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// A sleep for Promise.race deadlines: it does not keep the process alive once the race is over.
const deadline = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

// Calls fn until it returns a truthy value; throws after timeoutMs.
async function poll(fn, { timeoutMs = 10_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError = null;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (${lastError.message})` : ''}`);
    }
    await sleep(intervalMs);
  }
}

function spawnTracked(name, file, args, env) {
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let log = '';
  const append = (data) => {
    log += data;
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
    child.on('error', (err) => {
      append(`\nspawn error: ${err.message}\n`);
      children.delete(child);
      resolve({ code: -1, signal: null });
    });
  });
  const handle = {
    name,
    child,
    exited,
    get log() {
      return log;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const result = await Promise.race([exited, deadline(5_000).then(() => null)]);
      if (result) return result;
      console.error(`# ${name} did not exit within 5 s of SIGTERM; killing it`);
      child.kill('SIGKILL');
      return exited;
    },
  };
  return handle;
}

// Starts hearth-server on a free port; resolves once it listens (and, unless waitHealthy is
// false, once /health answers 200).
async function startServer(name, args, { env = {}, waitHealthy = true, timeoutMs = 30_000 } = {}) {
  const server = spawnTracked(name, SERVER_BIN, ['--host', '127.0.0.1', '--port', '0', ...args], env);
  const port = await poll(() => {
    const match = /server is listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(server.log);
    if (match) return Number(match[1]);
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${name} exited before listening`);
    }
    return 0;
  }, { timeoutMs, intervalMs: 50, what: `${name} to listen` }).catch((err) => {
    throw new Error(`${err.message}\n--- ${name} log ---\n${server.log}`);
  });
  server.url = `http://127.0.0.1:${port}/`;
  if (waitHealthy) {
    await poll(async () => (await fetch(`${server.url}health`)).status === 200,
      { timeoutMs, what: `${name} /health to answer 200` }).catch((err) => {
      throw new Error(`${err.message}\n--- ${name} log ---\n${server.log}`);
    });
  }
  return server;
}

function runToCompletion(name, file, args, timeoutMs) {
  const proc = spawnTracked(name, file, args, {});
  return Promise.race([
    proc.exited,
    deadline(timeoutMs).then(() => {
      proc.child.kill('SIGKILL');
      return { code: null, signal: 'timeout' };
    }),
  ]).then((result) => {
    if (result.code !== 0) throw new Error(`${name} failed (${result.code ?? result.signal}):\n${proc.log}`);
    return proc.log;
  });
}

// --- Browser ------------------------------------------------------------------------------------
let mainServer = null; // stories260K, shared by the chat tests
const OPERATOR_UI_CONFIG = { top_k: 7 };

function screenshotPath(name) {
  return path.join(SCREENSHOT_DIR, `${name}.png`);
}

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60);
}

// Runs fn(page, context) in a fresh browser context (empty storage); screenshots failures and
// fails on uncaught page errors.
async function withPage(t, fn) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  try {
    await fn(page, context);
    assert.deepEqual(pageErrors, [], 'the page threw uncaught errors');
  } catch (err) {
    await page.screenshot({ path: screenshotPath(`failed-${slug(t.name)}`) }).catch(() => {});
    throw err;
  } finally {
    await context.close().catch(() => {});
  }
}

// Opens the page and waits until it is connected (the header shows the model).
async function openChat(page, server, expectedModel = 'stories260K.gguf') {
  await page.goto(server.url);
  const modelName = page.getByTestId('model-name');
  await poll(async () => (await modelName.textContent()) === expectedModel,
    { what: `the header to show the model "${expectedModel}"` }).catch(async (err) => {
    throw new Error(`${err.message}; it shows "${await modelName.textContent()}"`);
  });
}

// The text of an element without the trailing newline Markdown paragraphs end with.
async function trimmedText(locator) {
  return (await locator.textContent()).trim();
}

async function send(page, text) {
  const input = page.getByTestId('composer-input');
  await input.fill(text);
  await input.press('Enter');
}

// Waits until there are `count` assistant messages and the last one has finished streaming;
// returns { content, stats, error } of that message.
async function waitForAnswer(page, count, timeoutMs = 20_000) {
  await page.waitForFunction((n) => {
    const all = document.querySelectorAll('[data-testid="message-assistant"]');
    return all.length === n && all[n - 1].dataset.streaming === 'false';
  }, count, { timeout: timeoutMs });
  const last = page.getByTestId('message-assistant').last();
  const error = last.getByTestId('error-message');
  return {
    content: await last.getByTestId('message-content').textContent(),
    stats: await last.getByTestId('message-stats').textContent(),
    error: (await error.count()) ? await error.textContent() : null,
  };
}

function assertAnswered(answer, what = 'the answer') {
  assert.equal(answer.error, null, `${what} shows an error`);
  assert.ok(answer.content.trim().length > 0, `${what} is empty`);
}

// Records the POST bodies (and headers) of chat completion requests the page makes.
function captureCompletions(page) {
  const requests = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname.endsWith('/v1/chat/completions')) {
      requests.push({ body: request.postDataJSON(), headers: request.headers() });
    }
  });
  return requests;
}

async function openSettings(page) {
  await page.getByTestId('settings-button').click();
  const dialog = page.getByTestId('settings-dialog');
  await dialog.waitFor({ state: 'visible' });
  return dialog;
}

async function saveSettings(page) {
  await page.getByTestId('settings-save').click();
  await page.getByTestId('settings-dialog').waitFor({ state: 'hidden' });
}

async function slotsProcessing(server) {
  const response = await fetch(`${server.url}slots`);
  assert.equal(response.status, 200, `GET /slots answered ${response.status}`);
  const slots = await response.json();
  return slots.some((slot) => slot.is_processing);
}

before(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  console.log(`# playwright-core ${PLAYWRIGHT_VERSION}, Chromium ${browser.version()}, screenshots in ${SCREENSHOT_DIR}`);
  mainServer = await startServer('hearth-server (stories260K)', [
    '-m', MODEL, '--chat-template', 'chatml', '-n', '256',
    '--ui-config', JSON.stringify(OPERATOR_UI_CONFIG),
  ]);
});

after(async () => {
  if (browser) await browser.close().catch(() => {});
  if (mainServer) await mainServer.stop();
  cleanUp();
});

// --- Serving options (plain HTTP) -------------------------------------------------------------
test('the page is served at / (gzip, ETag); --no-ui and --path change that; /props reports it', { timeout: 60_000 }, async () => {
  const page = await fetch(mainServer.url, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') || '', /^text\/html/);
  assert.equal(page.headers.get('content-encoding'), 'gzip');
  const etag = page.headers.get('etag');
  assert.ok(etag, 'no ETag on /');
  assert.match(await page.text(), /<div id="app">/);
  const again = await fetch(mainServer.url, { headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } });
  assert.equal(again.status, 304, 'a matching If-None-Match is not answered 304');

  const props = await (await fetch(`${mainServer.url}props`)).json();
  assert.equal(props.ui, true, '/props ui is not true with the embedded page');
  assert.deepEqual(props.ui_settings, OPERATOR_UI_CONFIG, '/props ui_settings is not the --ui-config object');

  const noUi = await startServer('hearth-server --no-ui', ['-m', MODEL, '--no-ui']);
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
  const withPath = await startServer('hearth-server --path', ['-m', MODEL, '--path', staticDir]);
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
    // Seeded before the page's scripts run (the page saves its own list on load and on
    // pagehide, which would overwrite a list written while it is open).
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
    });
    const health = await fetch(`${server.url}health`);
    assert.equal(health.status, 503, 'the server is not loading (the download finished too early?)');
    const healthBody = await health.json();
    assert.equal(healthBody.error?.progress?.stage, 'downloading');

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
  ]);
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
