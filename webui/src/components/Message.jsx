// One user or assistant message.

import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { formatPromptStats, formatStats, prettyArguments, shortModelName } from '../chat.js';
import { MessageAttachments } from './Attachments.jsx';
import { CopyButton } from './CopyButton.jsx';
import { Icon } from './Icon.jsx';
import { Markdown } from './Markdown.jsx';

function EditBox({ initialText, onSave, onCancel }) {
  const [text, setText] = useState(initialText);
  const input = useRef(null);
  // Focus and put the caret at the end before anything can type: a deferred effect could
  // move the caret after the user (or a test) already selected and replaced the text.
  useLayoutEffect(() => {
    const area = input.current;
    if (!area) return;
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }, []);

  const save = () => {
    if (text.trim()) onSave(text);
  };
  const onKeyDown = (event) => {
    if (event.key === 'Escape') onCancel();
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      save();
    }
  };

  return (
    <div class="edit-box">
      <textarea
        ref={input}
        data-testid="edit-input"
        rows={Math.min(12, Math.max(3, text.split('\n').length))}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <div class="edit-actions">
        <button type="button" class="ghost" onClick={onCancel}>Cancel</button>
        <button type="button" class="primary" data-testid="edit-save" disabled={!text.trim()} onClick={save}>
          Save &amp; send
        </button>
      </div>
    </div>
  );
}

export function UserMessage({ message, busy, onEdit }) {
  const [editing, setEditing] = useState(false);
  const save = (text) => {
    setEditing(false);
    onEdit(message.id, text);
  };

  return (
    <div class="message message-user" data-testid="message-user">
      <MessageAttachments attachments={message.attachments} />
      {editing ? (
        <EditBox initialText={message.content} onSave={save} onCancel={() => setEditing(false)} />
      ) : (
        message.content && (
          <div class="bubble">
            <Markdown text={message.content} />
          </div>
        )
      )}
      {!editing && (
        <div class="message-actions">
          <button
            type="button"
            class="ghost small"
            data-testid="message-edit"
            disabled={busy}
            onClick={() => setEditing(true)}
            title="Edit and resend"
          >
            <Icon name="edit" size={14} />
            <span>Edit</span>
          </button>
          {message.content && <CopyButton text={message.content} />}
        </div>
      )}
    </div>
  );
}

// Open while the answer streams and closed after, until the user opens or closes it: from
// then on it stays as they left it.
function Reasoning({ text, streaming, thinking }) {
  const [userOpen, setUserOpen] = useState(null);
  const open = userOpen ?? streaming;
  // A toggle event whose state differs from what was rendered is the user's.
  const onToggle = (event) => {
    if (event.currentTarget.open !== open) setUserOpen(event.currentTarget.open);
  };
  return (
    <details class="reasoning" data-testid="reasoning" open={open} onToggle={onToggle}>
      <summary>{thinking ? 'Thinking…' : 'Thinking'}</summary>
      <Markdown text={text} class="reasoning-body" testId="reasoning-content" />
    </details>
  );
}

function ToolCall({ call }) {
  return (
    <div class="tool-call" data-testid="tool-call">
      <div class="tool-call-head">
        <span class="tool-call-label">Tool call</span>
        <code class="tool-call-name">{call.name || '(unnamed)'}</code>
      </div>
      {call.arguments && <pre class="tool-call-args">{prettyArguments(call.arguments)}</pre>}
    </div>
  );
}

function AssistantFooter({ message, streaming, isLast, busy, onRegenerate }) {
  const stats = formatStats(message.timings);
  return (
    <div class="message-footer">
      <span class="message-stats" data-testid="message-stats" title={formatPromptStats(message.timings)}>
        {stats}
      </span>
      {message.finishReason === 'stopped' && !streaming && <span class="badge">stopped</span>}
      {message.finishReason === 'length' && !streaming && <span class="badge">length limit</span>}
      <span class="spacer" />
      {!streaming && message.content && <CopyButton text={message.content} />}
      {isLast && !streaming && (
        <button
          type="button"
          class="ghost small"
          data-testid="regenerate"
          disabled={busy}
          onClick={() => onRegenerate(message.id)}
          title="Generate this answer again"
        >
          <Icon name="refresh" size={14} />
          <span>Regenerate</span>
        </button>
      )}
    </div>
  );
}

export function AssistantMessage({ message, streaming, isLast, busy, onRegenerate }) {
  const waiting = streaming && !message.content && !message.reasoning && !(message.toolCalls || []).length;
  return (
    <div class="message message-assistant" data-testid="message-assistant" data-streaming={String(streaming)}>
      <div class="message-model" title={message.model}>{shortModelName(message.model) || 'Assistant'}</div>
      {message.reasoning && (
        <Reasoning text={message.reasoning} streaming={streaming} thinking={streaming && !message.content} />
      )}
      {(message.toolCalls || []).map((call, index) => <ToolCall key={call.id || index} call={call} />)}
      <Markdown text={message.content} />
      {waiting && <div class="typing" aria-label="Waiting for the answer"><span /><span /><span /></div>}
      {message.error && (
        <div class="error" data-testid="error-message" role="alert">{message.error}</div>
      )}
      <AssistantFooter
        message={message}
        streaming={streaming}
        isLast={isLast}
        busy={busy}
        onRegenerate={onRegenerate}
      />
    </div>
  );
}
