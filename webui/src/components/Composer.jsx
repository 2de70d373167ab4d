// Message input: Enter sends, Shift+Enter inserts a newline; Stop while streaming.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from './Icon.jsx';

const MAX_HEIGHT_PX = 220;

function fitHeight(area) {
  if (!area) return;
  area.style.height = 'auto';
  area.style.height = `${Math.min(area.scrollHeight, MAX_HEIGHT_PX)}px`;
}

export function Composer({ streaming, disabled, focusKey, onSend, onStop }) {
  const [text, setText] = useState('');
  const input = useRef(null);

  useEffect(() => {
    if (input.current && !disabled) input.current.focus();
  }, [focusKey, disabled]);

  useEffect(() => fitHeight(input.current), [text]);

  const canSend = !streaming && !disabled && text.trim() !== '';
  const submit = (event) => {
    if (event) event.preventDefault();
    if (!canSend) return;
    onSend(text);
    setText('');
  };
  const onKeyDown = (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form class="composer" onSubmit={submit}>
      <textarea
        ref={input}
        data-testid="composer-input"
        rows={1}
        placeholder="Send a message (Enter to send, Shift+Enter for a new line)"
        value={text}
        disabled={disabled}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      {streaming ? (
        <button type="button" class="primary stop" data-testid="stop-button" onClick={onStop} title="Stop generating">
          <Icon name="stop" />
          <span>Stop</span>
        </button>
      ) : (
        <button type="submit" class="primary" data-testid="send-button" disabled={!canSend} title="Send">
          <Icon name="send" />
          <span>Send</span>
        </button>
      )}
    </form>
  );
}
