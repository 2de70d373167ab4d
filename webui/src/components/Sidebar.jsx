// Conversation list: new, select, rename, export, delete.

import { Icon } from './Icon.jsx';

function ConversationItem({ conversation, active, streaming, onSelect, onRename, onExport, onDelete }) {
  const act = (handler) => (event) => {
    event.stopPropagation();
    handler(conversation);
  };
  return (
    <li
      class={`conversation${active ? ' active' : ''}`}
      data-testid="conversation-item"
      data-active={String(active)}
      aria-current={active ? 'true' : undefined}
      tabIndex={0}
      onClick={() => onSelect(conversation.id)}
      onKeyDown={(event) => event.key === 'Enter' && event.target === event.currentTarget && onSelect(conversation.id)}
      title={conversation.title}
    >
      <span class="conversation-title">{conversation.title}</span>
      {streaming && <span class="dot" aria-label="generating" />}
      <span class="conversation-actions">
        <button type="button" class="icon-button" data-testid="conversation-rename" aria-label="Rename" title="Rename" onClick={act(onRename)}>
          <Icon name="edit" size={14} />
        </button>
        <button type="button" class="icon-button" data-testid="conversation-export" aria-label="Export as JSON" title="Export as JSON" onClick={act(onExport)}>
          <Icon name="download" size={14} />
        </button>
        <button type="button" class="icon-button danger" data-testid="conversation-delete" aria-label="Delete" title="Delete" onClick={act(onDelete)}>
          <Icon name="trash" size={14} />
        </button>
      </span>
    </li>
  );
}

export function Sidebar({ conversations, currentId, streamingIds, open, buildInfo, onNew, onSelect, onRename, onExport, onDelete }) {
  return (
    <aside class={`sidebar${open ? ' open' : ''}`}>
      <div class="sidebar-head">
        <span class="brand">Hearth</span>
        <button type="button" class="secondary" data-testid="new-chat" onClick={onNew}>
          <Icon name="plus" />
          <span>New chat</span>
        </button>
      </div>
      <ul class="conversation-list">
        {conversations.map((conversation) => (
          <ConversationItem
            key={conversation.id}
            conversation={conversation}
            active={conversation.id === currentId}
            streaming={streamingIds.has(conversation.id)}
            onSelect={onSelect}
            onRename={onRename}
            onExport={onExport}
            onDelete={onDelete}
          />
        ))}
        {conversations.length === 0 && <li class="muted empty-list">No conversations yet.</li>}
      </ul>
      {/* /props build_info: "b<llama-server release Hearth follows>-<Hearth's commit>". */}
      <div class="sidebar-foot muted" data-testid="build-info"
        title={buildInfo ? 'llama-server release followed, then the commit of this Hearth build' : undefined}>
        {buildInfo ? `Hearth ${buildInfo}` : 'Hearth web chat'}
      </div>
    </aside>
  );
}
