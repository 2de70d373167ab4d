// Scrollable list of messages; follows the stream while the user is at the bottom.

import { useLayoutEffect, useRef } from 'preact/hooks';
import { shortModelName } from '../chat.js';
import { AssistantMessage, UserMessage } from './Message.jsx';

const STICK_DISTANCE_PX = 80;

function useStickToBottom(conversationId, messages) {
  const container = useRef(null);
  const stick = useRef(true);

  const onScroll = () => {
    const el = container.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_DISTANCE_PX;
  };

  const previous = useRef({ id: null, length: 0 });
  useLayoutEffect(() => {
    const el = container.current;
    if (!el) return;
    const changed = previous.current.id !== conversationId || previous.current.length !== messages.length;
    previous.current = { id: conversationId, length: messages.length };
    if (changed) stick.current = true;
    if (stick.current) el.scrollTop = el.scrollHeight;
  });

  return { container, onScroll };
}

function EmptyState({ modelName }) {
  return (
    <div class="empty-state">
      <h2>How can I help?</h2>
      <p>{modelName ? `Chatting with ${shortModelName(modelName)}.` : 'Type a message below to start.'}</p>
      <p class="muted">Conversations are kept in this browser only.</p>
    </div>
  );
}

export function MessageList({ conversation, streaming, modelName, onEdit, onRegenerate }) {
  const messages = conversation ? conversation.messages : [];
  const { container, onScroll } = useStickToBottom(conversation?.id, messages);
  const lastIndex = messages.length - 1;

  return (
    <div class="messages" ref={container} onScroll={onScroll}>
      {messages.length === 0 && <EmptyState modelName={modelName} />}
      <div class="messages-inner">
        {messages.map((message, index) =>
          message.role === 'user' ? (
            <UserMessage key={message.id} message={message} busy={streaming} onEdit={onEdit} />
          ) : (
            <AssistantMessage
              key={message.id}
              message={message}
              streaming={streaming && index === lastIndex}
              isLast={index === lastIndex}
              busy={streaming}
              onRegenerate={onRegenerate}
            />
          ),
        )}
      </div>
    </div>
  );
}
