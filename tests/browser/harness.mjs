// The browser tests' harness (see webui.test.mjs): the environment and its preconditions (a
// skip, exit 77, when Chromium, playwright-core or the model is missing), child processes that
// are always killed, hearth-server start-up, the shared browser and server, page helpers.

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
const UI_PATH = process.env.HEARTH_UI_PATH ? path.resolve(process.env.HEARTH_UI_PATH) : '';

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
if (UI_PATH && !fs.existsSync(path.join(UI_PATH, 'index.html'))) {
  console.error(`webui_browser_test: FAILED: HEARTH_UI_PATH ${UI_PATH} has no index.html`);
  process.exit(1);
}
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
// false, once /health answers 200). With HEARTH_UI_PATH the page comes from that directory
// unless uiOverride is false.
async function startServer(name, args, { env = {}, waitHealthy = true, timeoutMs = 30_000, uiOverride = true } = {}) {
  const uiArgs = UI_PATH && uiOverride ? ['--path', UI_PATH] : [];
  const server = spawnTracked(name, SERVER_BIN, ['--host', '127.0.0.1', '--port', '0', ...uiArgs, ...args], env);
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
  if (UI_PATH) console.log(`# the page is served from ${UI_PATH} (HEARTH_UI_PATH), not the embedded copy`);
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


export {
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
};
