// Line-based parser for the server's Server-Sent Events stream.
// Understands `data: {json}`, `data: [DONE]`, `error: {json}` and
// `event: error` followed by `data: {json}`; ignores comments and other fields.

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorFrom(value, fallbackText) {
  if (value && typeof value === 'object') {
    const inner = value.error !== undefined ? value.error : value;
    if (typeof inner === 'string') return { message: inner };
    if (inner && typeof inner === 'object') {
      return { ...inner, message: inner.message || JSON.stringify(inner) };
    }
  }
  return { message: fallbackText || 'The server reported an error.' };
}

// handlers: { onData(json), onError(error), onDone() }
export function createSseParser(handlers) {
  let buffer = '';
  let pendingEvent = '';
  let finished = false;

  function handleData(payload) {
    if (payload === '[DONE]') {
      finished = true;
      handlers.onDone();
      return;
    }
    const json = parseJson(payload);
    if (json === undefined) return;
    if (pendingEvent === 'error' || (json && json.error !== undefined)) {
      handlers.onError(errorFrom(json, payload));
    } else {
      handlers.onData(json);
    }
  }

  function handleLine(rawLine) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (finished) return;
    if (line === '') {
      pendingEvent = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') handleData(value.trim());
    else if (field === 'event') pendingEvent = value.trim();
    else if (field === 'error') handlers.onError(errorFrom(parseJson(value.trim()), value.trim()));
  }

  return {
    push(text) {
      buffer += text;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        handleLine(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    },
    end() {
      if (buffer) handleLine(buffer);
      buffer = '';
    },
    get finished() {
      return finished;
    },
  };
}
