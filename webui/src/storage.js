// Persistence in localStorage: conversations, user settings and the API key.
//
// Several tabs share the conversations: a tab never writes its in-memory list as is, it
// merges it with what is stored (conversation by conversation, the one changed last wins,
// see stampOf) and writes the result. Deleted conversation ids are kept in a tombstone
// list so that a tab that still holds one does not bring it back.

export const KEY_CONVERSATIONS = 'hearth.conversations';
export const KEY_DELETED = 'hearth.deletedConversations';
export const KEY_SETTINGS = 'hearth.settings';
const KEY_API_KEY = 'hearth.apiKey';
const MAX_TOMBSTONES = 1000;

function readJson(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text ? JSON.parse(text) : fallback;
  } catch {
    return fallback;
  }
}

function storageErrorText(err) {
  const full = err && (err.name === 'QuotaExceededError' || err.code === 22);
  const detail = (err && err.message) || String(err);
  return full
    ? `Browser storage is full; recent changes are not saved. Delete or export old conversations. (${detail})`
    : `Could not save to browser storage: ${detail}`;
}

// Returns an error message, or null on success (quota exceeded, private mode...).
function writeJson(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return null;
  } catch (err) {
    return storageErrorText(err);
  }
}

function isConversation(value) {
  return value && typeof value === 'object' && typeof value.id === 'string' && Array.isArray(value.messages);
}

function cleanConversation(conversation) {
  const messages = conversation.messages.filter((m) => m && typeof m === 'object' && typeof m.id === 'string');
  return messages.length === conversation.messages.length ? conversation : { ...conversation, messages };
}

// When a conversation last changed (any change: new message, streamed text, rename).
export function stampOf(conversation) {
  return conversation.modifiedAt || conversation.updatedAt || 0;
}

export function byNewest(a, b) {
  return (b.updatedAt || 0) - (a.updatedAt || 0) || (b.createdAt || 0) - (a.createdAt || 0)
    || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// Tombstones: { id: deletedAt }.
export function loadDeleted() {
  const list = readJson(KEY_DELETED, []);
  const deleted = new Map();
  if (Array.isArray(list)) {
    for (const entry of list) {
      if (entry && typeof entry.id === 'string') deleted.set(entry.id, Number(entry.at) || 0);
    }
  }
  return deleted;
}

// Records deleted ids at once (before the list is saved), so other tabs drop them.
export function saveDeleted(ids) {
  const deleted = loadDeleted();
  const now = Date.now();
  for (const id of ids) deleted.set(id, now);
  const list = [...deleted].map(([id, at]) => ({ id, at })).sort((a, b) => b.at - a.at).slice(0, MAX_TOMBSTONES);
  return writeJson(KEY_DELETED, list);
}

function loadStoredList() {
  const list = readJson(KEY_CONVERSATIONS, []);
  return Array.isArray(list) ? list.filter(isConversation).map(cleanConversation) : [];
}

// The stored conversations without deleted ones, newest first.
export function loadConversations() {
  const deleted = loadDeleted();
  return loadStoredList().filter((c) => !deleted.has(c.id)).sort(byNewest);
}

// Merges `incoming` into `list`: per id the later stampOf wins (ties keep `list`'s),
// deleted ids are dropped. Returns `list` itself when nothing changes.
export function mergeConversations(list, incoming, deleted) {
  const byId = new Map(list.map((c) => [c.id, c]));
  let changed = false;
  for (const c of incoming) {
    if (deleted.has(c.id)) continue;
    const mine = byId.get(c.id);
    if (!mine || stampOf(c) > stampOf(mine)) {
      byId.set(c.id, c);
      changed = true;
    }
  }
  for (const id of byId.keys()) {
    if (deleted.has(id)) {
      byId.delete(id);
      changed = true;
    }
  }
  return changed ? [...byId.values()].sort(byNewest) : list;
}

// Stored tombstones plus ids deleted here whose tombstones could not be written yet.
function deletedIds(unsaved) {
  const deleted = loadDeleted();
  for (const id of unsaved) deleted.set(id, 0);
  return deleted;
}

// What another tab wrote, merged into `list`.
export function mergeStoredConversations(list, unsavedDeletions = []) {
  return mergeConversations(list, loadStoredList(), deletedIds(unsavedDeletions));
}

// Saves `list` merged with what is stored now (other tabs' changes are kept).
// Returns an error message, or null on success.
export function saveConversations(list, unsavedDeletions = []) {
  const merged = mergeConversations(loadStoredList(), list, deletedIds(unsavedDeletions));
  return writeJson(KEY_CONVERSATIONS, merged);
}

export function loadSettingOverrides() {
  const value = readJson(KEY_SETTINGS, {});
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

export function saveSettingOverrides(overrides) {
  return writeJson(KEY_SETTINGS, overrides);
}

export function loadApiKey() {
  try {
    return localStorage.getItem(KEY_API_KEY) || '';
  } catch {
    return '';
  }
}

export function saveApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY_API_KEY, key);
    else localStorage.removeItem(KEY_API_KEY);
  } catch {
    // Storage unavailable: the key only lives for this page load.
  }
}

export function newId() {
  if (globalThis.crypto && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
