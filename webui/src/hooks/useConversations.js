// Conversation list state, persisted to localStorage (throttled while streaming).

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { loadConversations, saveConversations } from '../storage.js';

const SAVE_INTERVAL_MS = 800;

function byNewest(a, b) {
  return (b.updatedAt || 0) - (a.updatedAt || 0) || (b.createdAt || 0) - (a.createdAt || 0);
}

function usePersistence(conversations) {
  const [storageError, setStorageError] = useState(null);
  const latest = useRef(conversations);
  const timer = useRef(0);

  const flush = useCallback(() => {
    clearTimeout(timer.current);
    timer.current = 0;
    setStorageError(saveConversations(latest.current));
  }, []);

  useEffect(() => {
    latest.current = conversations;
    if (!timer.current) timer.current = setTimeout(flush, SAVE_INTERVAL_MS);
  }, [conversations, flush]);

  useEffect(() => {
    const onHide = () => {
      if (timer.current) flush();
    };
    window.addEventListener('pagehide', onHide);
    return () => window.removeEventListener('pagehide', onHide);
  }, [flush]);

  return storageError;
}

export function useConversations() {
  const [conversations, setConversations] = useState(() => loadConversations().sort(byNewest));
  const [currentId, setCurrentId] = useState(() => conversations[0]?.id ?? null);
  const storageError = usePersistence(conversations);

  const add = useCallback((conversation) => {
    setConversations((list) => [conversation, ...list]);
    setCurrentId(conversation.id);
  }, []);

  // change(conversation) returns the updated conversation; touch moves it to the top.
  const update = useCallback((id, change, touch = true) => {
    setConversations((list) => {
      const updated = list.map((conversation) => {
        if (conversation.id !== id) return conversation;
        const next = change(conversation);
        return touch ? { ...next, updatedAt: Date.now() } : next;
      });
      return touch ? updated.sort(byNewest) : updated;
    });
  }, []);

  const rename = useCallback((id, title) => update(id, (c) => ({ ...c, title }), false), [update]);

  const remove = useCallback((id) => {
    setConversations((list) => list.filter((conversation) => conversation.id !== id));
    setCurrentId((current) => (current === id ? null : current));
  }, []);

  const current = conversations.find((conversation) => conversation.id === currentId) || null;

  return {
    conversations,
    current,
    currentId,
    select: setCurrentId,
    startNew: () => setCurrentId(null),
    add,
    update,
    rename,
    remove,
    storageError,
  };
}
