// Line-based parser for the server's Server-Sent Events stream.
// Understands `data: {json}`, `data: [DONE]`, `error: {json}` (llama.cpp's non-standard
// field) and `event: error` followed by `data: {json}`; ignores comments and other fields.
// As in the SSE spec, lines end with CRLF, LF or CR, the data lines of one event are joined
// with "\n" and the event is dispatched at the blank line that ends it (or at the end of
// the stream).

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorFrom(value, fallbackText) {
  if (value && typeof value === 'object') {
    const inner = value.error != null ? value.error : value;
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
  let eventType = '';
  let dataLines = null; // the data lines of the event being read, or null
  let finished = false;

  function dispatch() {
    const type = eventType;
    const lines = dataLines;
    eventType = '';
    dataLines = null;
    if (!lines) return;
    const payload = lines.join('\n').trim();
    if (payload === '[DONE]') {
      finished = true;
      handlers.onDone();
      return;
    }
    const json = parseJson(payload);
    if (type === 'error') {
      handlers.onError(errorFrom(json, payload));
      return;
    }
    if (json === undefined) return;
    if (json && typeof json === 'object' && json.error != null) handlers.onError(errorFrom(json, payload));
    else handlers.onData(json);
  }

  function handleLine(line) {
    if (finished) return;
    if (line === '') {
      dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') {
      if (dataLines) dataLines.push(value);
      else dataLines = [value];
    } else if (field === 'event') {
      eventType = value.trim();
    } else if (field === 'error') {
      const text = value.trim();
      handlers.onError(errorFrom(parseJson(text), text));
    }
  }

  return {
    push(text) {
      buffer += text;
      const lineEnd = /\r\n|\r|\n/g;
      let start = 0;
      for (;;) {
        lineEnd.lastIndex = start;
        const found = lineEnd.exec(buffer);
        if (!found) break;
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (found[0] === '\r' && found.index === buffer.length - 1) break;
        handleLine(buffer.slice(start, found.index));
        start = found.index + found[0].length;
        if (finished) break;
      }
      buffer = finished ? '' : buffer.slice(start);
    },
    end() {
      if (!finished) {
        const rest = buffer.endsWith('\r') ? buffer.slice(0, -1) : buffer;
        if (rest) handleLine(rest);
        dispatch();
      }
      buffer = '';
    },
    get finished() {
      return finished;
    },
  };
}
