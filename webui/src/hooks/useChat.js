// Sending, streaming, stopping, regenerating and editing messages.

import { useCallback, useRef, useState } from 'preact/hooks';
import { streamChatCompletion } from '../api.js';
import { attachmentIds } from '../attachments.js';
import {
  applyChunk,
  createAssistantMessage,
  createConversation,
  createUserMessage,
  DEFAULT_TITLE,
  requestBody,
  snapshotMessage,
  titleFromMessage,
} from '../chat.js';
import { loadMedia, putMedia } from '../media.js';

const RENDER_INTERVAL_MS = 40;

function replaceMessage(conversation, message) {
  return {
    ...conversation,
    messages: conversation.messages.map((m) => (m.id === message.id ? message : m)),
  };
}

// The data URLs of the attachments in `history`; throws, naming the file, when one is no
// longer stored (another browser's storage, or storage cleared): sending without it would
// silently change what the model sees.
async function historyMedia(history) {
  const media = await loadMedia(attachmentIds({ messages: history }));
  for (const message of history) {
    const lost = (message.attachments || []).find((meta) => !media.has(meta.id));
    if (lost) throw new Error(`The attachment "${lost.name}" is no longer in this browser's storage; edit the message to send it without it.`);
  }
  return (id) => media.get(id);
}

function useStreamingSet() {
  const controllers = useRef(new Map());
  const [streamingIds, setStreamingIds] = useState(() => new Set());

  const begin = useCallback((conversationId) => {
    // One answer per conversation: a new one (regenerate, edit) stops the one still running,
    // which would otherwise keep a server slot busy and race with the new answer's updates.
    const previous = controllers.current.get(conversationId);
    if (previous) previous.abort();
    const controller = new AbortController();
    controllers.current.set(conversationId, controller);
    setStreamingIds(new Set(controllers.current.keys()));
    return controller;
  }, []);

  const end = useCallback((conversationId, controller) => {
    if (controllers.current.get(conversationId) === controller) controllers.current.delete(conversationId);
    setStreamingIds(new Set(controllers.current.keys()));
  }, []);

  const stop = useCallback((conversationId) => {
    const controller = controllers.current.get(conversationId);
    if (controller) controller.abort();
  }, []);

  return { streamingIds, begin, end, stop };
}

// store: the useConversations() object; getSettings(): effective settings now.
// onMediaError(message): attachments could not be stored (they are still sent).
export function useChat({ store, getSettings, modelName, onUnauthorized, onMediaError }) {
  const { streamingIds, begin, end, stop } = useStreamingSet();
  const { update } = store;

  // Replaces the conversation's messages by `history` plus a new streamed answer.
  const generate = useCallback(async (conversationId, history) => {
    const draft = createAssistantMessage(modelName);
    update(conversationId, (c) => ({ ...c, messages: [...history, snapshotMessage(draft)] }));
    const controller = begin(conversationId);
    let timer = 0;
    const render = () => {
      timer = 0;
      update(conversationId, (c) => replaceMessage(c, snapshotMessage(draft)), false);
    };
    const scheduleRender = () => {
      if (!timer) timer = setTimeout(render, RENDER_INTERVAL_MS);
    };
    try {
      const dataOf = await historyMedia(history);
      const body = requestBody(history, getSettings(), dataOf);
      const { complete } = await streamChatCompletion(body, controller.signal, {
        onData(chunk) {
          applyChunk(draft, chunk);
          scheduleRender();
        },
        onError(error) {
          draft.error = (error && error.message) || 'The server reported an error.';
          scheduleRender();
        },
      });
      if (!complete && !draft.finishReason && !draft.error && !controller.signal.aborted) {
        draft.error = 'The connection closed before the answer was complete.';
      }
    } catch (err) {
      // Stopped: also when the abort surfaced as another error (e.g. while reading an error body).
      if (err.name === 'AbortError' || controller.signal.aborted) {
        draft.finishReason = draft.finishReason || 'stopped';
      } else {
        draft.error = err.message || String(err);
        if (err.unauthorized) onUnauthorized();
      }
    } finally {
      clearTimeout(timer);
      render();
      end(conversationId, controller);
    }
  }, [update, begin, end, getSettings, modelName, onUnauthorized]);

  // attachments: [{ meta, dataUrl }] (attachments.js readAttachment).
  const send = useCallback((conversation, text, attachments = []) => {
    const userMessage = createUserMessage(text, attachments.map((attachment) => attachment.meta));
    if (attachments.length) {
      putMedia(attachments.map(({ meta, dataUrl }) => ({ id: meta.id, dataUrl })))
        .then(() => onMediaError(null), (err) => onMediaError(err.message));
    }
    if (!conversation) {
      const created = createConversation(userMessage);
      store.add(created);
      generate(created.id, created.messages);
      return;
    }
    if (conversation.messages.length === 0 && conversation.title === DEFAULT_TITLE) {
      update(conversation.id, (c) => ({ ...c, title: titleFromMessage(userMessage) }));
    }
    generate(conversation.id, [...conversation.messages, userMessage]);
  }, [store, update, generate, onMediaError]);

  const regenerate = useCallback((conversation, messageId) => {
    const index = conversation.messages.findIndex((m) => m.id === messageId);
    if (index < 0) return;
    generate(conversation.id, conversation.messages.slice(0, index));
  }, [generate]);

  const editAndResend = useCallback((conversation, messageId, text) => {
    const index = conversation.messages.findIndex((m) => m.id === messageId);
    if (index < 0) return;
    const edited = { ...conversation.messages[index], content: text };
    generate(conversation.id, [...conversation.messages.slice(0, index), edited]);
  }, [generate]);

  return { streamingIds, send, regenerate, editAndResend, stop };
}
