// Message input: Enter sends, Shift+Enter inserts a newline; Stop while streaming.
// Images and audio come in through the attach button, a paste or a drop, where the model
// reads them (/props modalities); otherwise the button is disabled and says why.

import { useEffect, useRef, useState } from 'preact/hooks';
import { acceptFor, attachTitle, filesOf, unavailableReason } from '../attachments.js';
import { useAttachments } from '../hooks/useAttachments.js';
import { AttachmentChip } from './Attachments.jsx';
import { Icon } from './Icon.jsx';

const MAX_HEIGHT_PX = 220;

function fitHeight(area) {
  if (!area) return;
  area.style.height = 'auto';
  area.style.height = `${Math.min(area.scrollHeight, MAX_HEIGHT_PX)}px`;
}

function hasFiles(event) {
  return [...(event.dataTransfer?.types || [])].includes('Files');
}

// Dropping a file outside the composer would make the browser open it in place of the page.
function useNoNavigationOnDrop() {
  useEffect(() => {
    const block = (event) => {
      if (hasFiles(event)) event.preventDefault();
    };
    window.addEventListener('dragover', block);
    window.addEventListener('drop', block);
    return () => {
      window.removeEventListener('dragover', block);
      window.removeEventListener('drop', block);
    };
  }, []);
}

function AttachButton({ modalities, disabled, onFiles }) {
  const picker = useRef(null);
  const unavailable = unavailableReason(modalities);
  const onChange = (event) => {
    const files = [...event.currentTarget.files];
    event.currentTarget.value = ''; // the same file can be chosen again
    onFiles(files);
  };
  return (
    <>
      <button
        type="button"
        class="secondary attach"
        data-testid="attach-button"
        disabled={disabled || !!unavailable}
        title={attachTitle(modalities)}
        aria-label={attachTitle(modalities)}
        onClick={() => picker.current && picker.current.click()}
      >
        <Icon name="attach" />
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        accept={acceptFor(modalities)}
        disabled={disabled || !!unavailable}
        onChange={onChange}
      />
    </>
  );
}

// Files pasted into the text box or dropped on the composer become attachments (or a notice).
function useFileTransfer(media, disabled) {
  const [dragging, setDragging] = useState(false);
  useNoNavigationOnDrop();
  // Pasted text goes in as usual; only a paste that carries files is taken over.
  const onPaste = (event) => {
    const files = filesOf(event.clipboardData);
    if (!files.length || disabled) return;
    event.preventDefault();
    media.add(files);
  };
  const onDrop = (event) => {
    setDragging(false);
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (!disabled) media.add(filesOf(event.dataTransfer));
  };
  const onDragOver = (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    setDragging(true);
  };
  return { dragging, onPaste, dropTarget: { onDragOver, onDrop, onDragLeave: () => setDragging(false) } };
}

function Notice({ text, onDismiss }) {
  return (
    <div class="error composer-notice" data-testid="attachment-notice" role="alert">
      <span>{text}</span>
      <button type="button" class="icon-button" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
        <Icon name="close" size={14} />
      </button>
    </div>
  );
}

export function Composer({ streaming, disabled, focusKey, modalities, onSend, onStop }) {
  const [text, setText] = useState('');
  const input = useRef(null);
  const media = useAttachments(modalities);
  const transfer = useFileTransfer(media, disabled);

  useEffect(() => {
    if (input.current && !disabled) input.current.focus();
  }, [focusKey, disabled]);

  useEffect(() => fitHeight(input.current), [text]);

  const canSend = !streaming && !disabled && (text.trim() !== '' || media.attachments.length > 0);
  const submit = (event) => {
    if (event) event.preventDefault();
    if (!canSend) return;
    onSend(text, media.attachments);
    setText('');
    media.clear();
  };
  const onKeyDown = (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form class={`composer${transfer.dragging ? ' dragging' : ''}`} data-testid="composer" onSubmit={submit}
      {...transfer.dropTarget}>
      {media.notice && <Notice text={media.notice} onDismiss={() => media.setNotice('')} />}
      {media.attachments.length > 0 && (
        <div class="attachments composer-attachments">
          {media.attachments.map(({ meta, dataUrl }) => (
            <AttachmentChip key={meta.id} meta={meta} dataUrl={dataUrl} testId="attachment-preview"
              onRemove={() => media.remove(meta.id)} />
          ))}
        </div>
      )}
      <div class="composer-row">
        <AttachButton modalities={modalities} disabled={disabled} onFiles={media.add} />
        <textarea
          ref={input}
          data-testid="composer-input"
          rows={1}
          placeholder="Send a message (Enter to send, Shift+Enter for a new line)"
          value={text}
          disabled={disabled}
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={onKeyDown}
          onPaste={transfer.onPaste}
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
      </div>
    </form>
  );
}
