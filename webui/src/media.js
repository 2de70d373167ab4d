// The bytes of attached images and audio, as data URLs, in IndexedDB (database
// "hearth-media", store "media", key: the attachment id, value: { dataUrl, savedAt }).
// localStorage holds only a few megabytes, so conversations there keep just the ids.
// A memory cache answers the page's own reads at once; every tab of the page shares the
// database, as it shares the conversations.

const DB_NAME = 'hearth-media';
const STORE = 'media';
// Entries no stored conversation names are removed at start-up once this old: younger ones
// may belong to a message another tab has not saved yet (it saves within a second).
const ORPHAN_GRACE_MS = 10 * 60 * 1000;

const cache = new Map();
let opening = null;

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function openDb() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      if (!globalThis.indexedDB) {
        reject(new Error('this browser offers no IndexedDB'));
        return;
      }
      const request = indexedDB.open(DB_NAME, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error('the media database is blocked by another tab'));
    });
    opening.catch(() => {
      opening = null; // try again next time
    });
  }
  return opening;
}

// Runs fn(store) in one transaction; resolves when it has committed.
async function withStore(mode, fn) {
  const db = await openDb();
  const transaction = db.transaction(STORE, mode);
  const result = fn(transaction.objectStore(STORE));
  await new Promise((resolve, reject) => {
    transaction.oncomplete = resolve;
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error || new Error('the transaction was aborted'));
  });
  return result;
}

export function cachedMedia(id) {
  return cache.get(id);
}

// Keeps the attachments' data (cache first, so the request can be built before it is stored).
// Rejects with a message fit for a banner when the browser refuses to store it.
export async function putMedia(entries) {
  for (const { id, dataUrl } of entries) cache.set(id, dataUrl);
  const savedAt = Date.now();
  try {
    await withStore('readwrite', (store) => {
      for (const { id, dataUrl } of entries) store.put({ dataUrl, savedAt }, id);
    });
  } catch (err) {
    const full = err && err.name === 'QuotaExceededError';
    throw new Error(`${full ? 'Browser storage is full' : 'Browser storage refused the attachment'}: `
      + `it is sent now but will be missing after a reload. (${(err && err.message) || err})`);
  }
}

// Resolves to a Map id -> data URL of those of `ids` that are stored (missing ids are absent).
export async function loadMedia(ids) {
  const found = new Map();
  const wanted = [];
  for (const id of ids) {
    if (cache.has(id)) found.set(id, cache.get(id));
    else wanted.push(id);
  }
  if (!wanted.length) return found;
  try {
    const requests = await withStore('readonly', (store) => wanted.map((id) => [id, promised(store.get(id))]));
    for (const [id, request] of requests) {
      const value = await request;
      if (value && typeof value.dataUrl === 'string') {
        cache.set(id, value.dataUrl);
        found.set(id, value.dataUrl);
      }
    }
  } catch {
    // No database: what is not cached is missing.
  }
  return found;
}

export async function deleteMedia(ids) {
  for (const id of ids) cache.delete(id);
  if (!ids.length) return;
  try {
    await withStore('readwrite', (store) => {
      for (const id of ids) store.delete(id);
    });
  } catch {
    // Left for the start-up sweep.
  }
}

// Removes stored media that no conversation in `referenced` (a Set of ids) names any more.
export async function sweepOrphans(referenced) {
  try {
    const old = Date.now() - ORPHAN_GRACE_MS;
    await withStore('readwrite', (store) => {
      const request = store.openCursor();
      request.onsuccess = () => {
        const cursor = request.result;
        if (!cursor) return;
        if (!referenced.has(cursor.key) && !((cursor.value && cursor.value.savedAt) > old)) cursor.delete();
        cursor.continue();
      };
    });
  } catch {
    // Nothing to sweep without a database.
  }
}
