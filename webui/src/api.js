// HTTP access to the server. All URLs are relative so the page works under --api-prefix.

import { createSseParser } from './sse.js';
import { loadApiKey, saveApiKey } from './storage.js';

let apiKey = loadApiKey();

export function getApiKey() {
  return apiKey;
}

export function setApiKey(key) {
  apiKey = (key || '').trim();
  saveApiKey(apiKey);
}

export class ApiError extends Error {
  constructor(message, status = 0, type = '') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
  }

  get unauthorized() {
    return this.status === 401 || this.type === 'authentication_error';
  }
}

// A header value must be a byte string: a key with other characters would make every fetch
// throw (and the page would look offline). Such a key cannot be right, so it is not sent and
// the server's 401 brings the key prompt back.
function isSendableKey(key) {
  return /^[\x20-\x7e]+$/.test(key);
}

function requestHeaders(extra) {
  const headers = { ...extra };
  if (apiKey && isSendableKey(apiKey)) headers.Authorization = `Bearer ${apiKey}`;
  return headers;
}

async function request(path, options = {}) {
  try {
    return await fetch(`./${path}`, { ...options, headers: requestHeaders(options.headers) });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(`Network error: could not reach the server (${err.message || err}).`);
  }
}

async function readBody(response) {
  const text = await response.text().catch(() => '');
  try {
    return { text, json: JSON.parse(text) };
  } catch {
    return { text, json: undefined };
  }
}

function messageFromBody(body, response) {
  const error = body.json && body.json.error;
  if (error && typeof error === 'object' && error.message) return { message: error.message, type: error.type || '' };
  if (typeof error === 'string') return { message: error, type: '' };
  if (body.json && typeof body.json.message === 'string') return { message: body.json.message, type: '' };
  const text = body.text.trim().slice(0, 500);
  return { message: text || `HTTP ${response.status} ${response.statusText}`.trim(), type: '' };
}

async function errorFromResponse(response) {
  const body = await readBody(response);
  const { message, type } = messageFromBody(body, response);
  const prefix = response.status >= 500 ? `Server error ${response.status}: ` : '';
  // Every message re-sends the conversation's images and audio, so a long one can outgrow
  // the server's request size limit.
  if (response.status === 413) {
    const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
    const hint = 'The conversation with its attachments is too large to send: start a new conversation or attach fewer files.';
    return new ApiError(`${sentence} ${hint}`, response.status, type);
  }
  return new ApiError(prefix + message, response.status, type);
}

async function getJson(path, signal) {
  const response = await request(path, { signal });
  if (!response.ok) throw await errorFromResponse(response);
  const body = await readBody(response);
  if (body.json === undefined) throw new ApiError(`Invalid JSON from ${path}.`, response.status);
  return body.json;
}

// While the server downloads the model, its 503 carries
// error.progress = { stage: 'downloading', fraction, downloaded_bytes, total_bytes, ... }.
function progressFrom(json) {
  const raw = json?.error?.progress?.fraction;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return null;
  return Math.min(1, Math.max(0, raw));
}

// Resolves to { state: 'ok' | 'loading' | 'unauthorized' | 'error', message, progress }.
export async function fetchHealth(signal) {
  let response;
  try {
    response = await request('health', { signal });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    return { state: 'error', message: err.message, progress: null };
  }
  if (response.ok) return { state: 'ok', message: '', progress: null };
  const body = await readBody(response);
  const { message } = messageFromBody(body, response);
  if (response.status === 503) return { state: 'loading', message, progress: progressFrom(body.json) };
  if (response.status === 401) return { state: 'unauthorized', message, progress: null };
  return { state: 'error', message: `Health check failed (${response.status}): ${message}`, progress: null };
}

export function fetchProps(signal) {
  return getJson('props', signal);
}

export async function fetchFirstModelId(signal) {
  const json = await getJson('v1/models', signal);
  const first = Array.isArray(json?.data) ? json.data[0] : null;
  return first && typeof first.id === 'string' ? first.id : '';
}

// A non-streamed completion (server ignored "stream") turned into one chunk.
function completionAsChunk(json) {
  const choice = json?.choices?.[0] || {};
  return { ...json, choices: [{ ...choice, delta: choice.message || {} }] };
}

// Resolves to true when the stream ended with [DONE].
async function readEventStream(response, handlers) {
  const parser = createSseParser(handlers);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(decoder.decode(value, { stream: true }));
    if (parser.finished) {
      reader.cancel().catch(() => {});
      return true;
    }
  }
  parser.push(decoder.decode());
  parser.end();
  return parser.finished;
}

// Streams a chat completion. handlers: { onData(chunk), onError(error) }.
// Resolves to { complete } (false when the stream broke off before [DONE]);
// rejects with ApiError / AbortError.
export async function streamChatCompletion(body, signal, handlers) {
  const response = await request('v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorFromResponse(response);
  const type = response.headers.get('content-type') || '';
  if (type.includes('application/json')) {
    const json = (await readBody(response)).json;
    if (json && json.error) handlers.onError(typeof json.error === 'string' ? { message: json.error } : json.error);
    else if (json) handlers.onData(completionAsChunk(json));
    else throw new ApiError('The server returned invalid JSON.', response.status);
    return { complete: true };
  }
  if (!response.body) throw new ApiError('The server returned an empty response.');
  const complete = await readEventStream(response, { ...handlers, onDone() {} });
  return { complete };
}
