// Conversation list state, persisted to localStorage (throttled while streaming) and kept
// in step with other tabs of the page (the `storage` event).

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import {
  byNewest,
  KEY_CONVERSATIONS,
  KEY_DELETED,
  loadConversations,
  mergeStoredConversations,
  saveConversations,
  saveDeleted,
  stampOf,
} from '../storage.js';

const SAVE_INTERVAL_MS = 800;

// Only local changes are saved (markChanged); loading or taking in another tab's changes
// never writes, so a stale list cannot overwrite newer stored data.
function usePersistence(conversations, setConversations) {
  const [storageError, setStorageError] = useState(null);
  const latest = useRef(conversations);
  latest.current = conversations;
  const timer = useRef(0);
  const dirty = useRef(false);
  const unsavedDeletions = useRef([]); // tombstones that could not be written yet (storage full)

  const flush = useCallback(() => {
    clearTimeout(timer.current);
    timer.current = 0;
    if (!dirty.current) return;
    dirty.current = false;
    let error = saveConversations(latest.current, unsavedDeletions.current);
    // The list without the deleted conversations is smaller: now their tombstones may fit.
    if (!error && unsavedDeletions.current.length) {
      error = saveDeleted(unsavedDeletions.current);
      if (!error) unsavedDeletions.current = [];
    }
    setStorageError(error);
  }, []);

  // Tombstones are written at once, so another tab's next save or event cannot bring the
  // conversation back.
  const recordDeletion = useCallback((id) => {
    const error = saveDeleted([...unsavedDeletions.current, id]);
    if (error) {
      unsavedDeletions.current.push(id);
      setStorageError(error);
    } else {
      unsavedDeletions.current = [];
    }
  }, []);

  const markChanged = useCallback(() => {
    dirty.current = true;
    if (!timer.current) timer.current = setTimeout(flush, SAVE_INTERVAL_MS);
  }, [flush]);

  useEffect(() => {
    const onHide = () => flush();
    const onStorage = (event) => {
      if (event.storageArea && event.storageArea !== window.localStorage) return;
      if (event.key !== null && event.key !== KEY_CONVERSATIONS && event.key !== KEY_DELETED) return;
      setConversations((list) => mergeStoredConversations(list, unsavedDeletions.current));
    };
    window.addEventListener('pagehide', onHide);
    window.addEventListener('storage', onStorage);
    return () => {
      window.removeEventListener('pagehide', onHide);
      window.removeEventListener('storage', onStorage);
      clearTimeout(timer.current);
    };
  }, [flush, setConversations]);

  return { storageError, markChanged, recordDeletion };
}

// A stamp later than both the clock and the conversation's previous one.
function nextStamp(conversation) {
  return Math.max(Date.now(), stampOf(conversation) + 1);
}

export function useConversations() {
  const [conversations, setConversations] = useState(loadConversations);
  const [currentId, setCurrentId] = useState(() => conversations[0]?.id ?? null);
  const { storageError, markChanged, recordDeletion } = usePersistence(conversations, setConversations);

  const add = useCallback((conversation) => {
    setConversations((list) => [{ ...conversation, modifiedAt: nextStamp(conversation) }, ...list]);
    setCurrentId(conversation.id);
    markChanged();
  }, [markChanged]);

  // change(conversation) returns the updated conversation; touch moves it to the top.
  const update = useCallback((id, change, touch = true) => {
    setConversations((list) => {
      if (!list.some((conversation) => conversation.id === id)) return list;
      const updated = list.map((conversation) => {
        if (conversation.id !== id) return conversation;
        const stamp = nextStamp(conversation);
        const next = { ...change(conversation), modifiedAt: stamp };
        return touch ? { ...next, updatedAt: stamp } : next;
      });
      return touch ? updated.sort(byNewest) : updated;
    });
    markChanged();
  }, [markChanged]);

  const rename = useCallback((id, title) => update(id, (c) => ({ ...c, title }), false), [update]);

  const remove = useCallback((id) => {
    recordDeletion(id);
    setConversations((list) => list.filter((conversation) => conversation.id !== id));
    setCurrentId((current) => (current === id ? null : current));
    markChanged();
  }, [markChanged, recordDeletion]);

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
