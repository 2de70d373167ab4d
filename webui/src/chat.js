// Pure helpers for messages: creation, streaming accumulation, request building, stats.

import { messageContent } from './attachments.js';
import { samplingParams } from './settings.js';
import { newId } from './storage.js';

export const DEFAULT_TITLE = 'New chat';
const TITLE_LENGTH = 48;

// attachments: metadata of attached images and audio (attachments.js), kept only when any.
export function createUserMessage(content, attachments = []) {
  const message = { id: newId(), role: 'user', content, createdAt: Date.now() };
  if (attachments.length) message.attachments = attachments;
  return message;
}

// The title a message gives a new conversation: its text, else its first attachment's name.
export function titleFromMessage(message) {
  if (!message) return DEFAULT_TITLE;
  const name = message.attachments && message.attachments[0] && message.attachments[0].name;
  return message.content.trim() || !name ? titleFromText(message.content) : titleFromText(name);
}

export function createAssistantMessage(model) {
  return {
    id: newId(),
    role: 'assistant',
    content: '',
    reasoning: '',
    toolCalls: [],
    model: model || '',
    timings: null,
    finishReason: null,
    error: null,
    createdAt: Date.now(),
  };
}

export function createConversation(firstMessage) {
  const now = Date.now();
  return {
    id: newId(),
    title: titleFromMessage(firstMessage),
    createdAt: now,
    updatedAt: now,
    messages: firstMessage ? [firstMessage] : [],
  };
}

export function titleFromText(text) {
  const line = (text || '').replace(/\s+/g, ' ').trim();
  if (!line) return DEFAULT_TITLE;
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1).trimEnd()}…` : line;
}

function mergeToolCallDeltas(toolCalls, deltas) {
  deltas.forEach((delta, position) => {
    const index = typeof delta.index === 'number' ? delta.index : position;
    const call = toolCalls[index] || (toolCalls[index] = { id: '', name: '', arguments: '' });
    if (delta.id) call.id = delta.id;
    const fn = delta.function || {};
    if (fn.name && fn.name !== call.name) call.name += fn.name;
    if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
    else if (fn.arguments && typeof fn.arguments === 'object') call.arguments = JSON.stringify(fn.arguments);
  });
}

// Folds one streamed chunk into the (mutable) assistant message draft.
export function applyChunk(message, chunk) {
  if (!chunk || typeof chunk !== 'object') return message;
  if (chunk.model && !message.model) message.model = chunk.model;
  if (chunk.timings && typeof chunk.timings === 'object') message.timings = { ...chunk.timings };
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : null;
  if (!choice) return message;
  const delta = choice.delta || {};
  if (typeof delta.content === 'string') message.content += delta.content;
  if (typeof delta.reasoning_content === 'string') message.reasoning += delta.reasoning_content;
  if (Array.isArray(delta.tool_calls) && delta.tool_calls.length) {
    mergeToolCallDeltas(message.toolCalls, delta.tool_calls);
  }
  if (choice.finish_reason) message.finishReason = choice.finish_reason;
  return message;
}

export function snapshotMessage(draft) {
  return { ...draft, toolCalls: draft.toolCalls.filter(Boolean).map((call) => ({ ...call })) };
}

// dataOf(id): the data URL of an attachment (see media.js).
export function requestMessages(messages, systemPrompt, dataOf = () => '') {
  const result = [];
  if (systemPrompt && systemPrompt.trim()) result.push({ role: 'system', content: systemPrompt });
  for (const message of messages) {
    if (message.role === 'assistant' && !message.content) continue;
    result.push({ role: message.role, content: messageContent(message, dataOf) });
  }
  return result;
}

export function requestBody(messages, settings, dataOf) {
  return {
    messages: requestMessages(messages, settings.systemPrompt, dataOf),
    stream: true,
    timings_per_token: true,
    ...samplingParams(settings),
  };
}

// Tokens in the context after the last answer: prompt + cached + generated.
export function contextTokens(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const timings = messages[i].timings;
    if (messages[i].role === 'assistant' && timings) {
      return (timings.prompt_n || 0) + (timings.cache_n || 0) + (timings.predicted_n || 0);
    }
  }
  return null;
}

export function formatStats(timings) {
  if (!timings || typeof timings.predicted_n !== 'number') return '';
  const tokens = `${timings.predicted_n} token${timings.predicted_n === 1 ? '' : 's'}`;
  const speed = timings.predicted_per_second;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed <= 0) return tokens;
  return `${tokens} · ${speed.toFixed(speed >= 100 ? 0 : 1)} tokens/s`;
}

export function formatPromptStats(timings) {
  if (!timings || typeof timings.prompt_n !== 'number') return '';
  const speed = timings.prompt_per_second;
  const rate = typeof speed === 'number' && speed > 0 ? `, ${speed.toFixed(0)} tokens/s` : '';
  const cached = timings.cache_n ? `, ${timings.cache_n} cached` : '';
  return `Prompt: ${timings.prompt_n} tokens${cached}${rate}`;
}

export function prettyArguments(text) {
  if (!text) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// File paths are shortened to their file name; names like "org/model" are kept.
export function shortModelName(name) {
  if (!name) return '';
  const text = String(name);
  const looksLikePath = /\.gguf$/i.test(text) || /^[./~]/.test(text) || text.includes('\\');
  if (!looksLikePath) return text;
  const parts = text.split(/[\\/]/);
  return parts[parts.length - 1] || text;
}
