// Persistence in localStorage: conversations, user settings and the API key.

const KEY_CONVERSATIONS = 'hearth.conversations';
const KEY_SETTINGS = 'hearth.settings';
const KEY_API_KEY = 'hearth.apiKey';

function readJson(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text ? JSON.parse(text) : fallback;
  } catch {
    return fallback;
  }
}

// Returns an error message, or null on success (quota exceeded, private mode...).
function writeJson(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return null;
  } catch (err) {
    return `Could not save to browser storage: ${err.message || err}`;
  }
}

function isConversation(value) {
  return value && typeof value.id === 'string' && Array.isArray(value.messages);
}

export function loadConversations() {
  const list = readJson(KEY_CONVERSATIONS, []);
  return Array.isArray(list) ? list.filter(isConversation) : [];
}

export function saveConversations(conversations) {
  return writeJson(KEY_CONVERSATIONS, conversations);
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
