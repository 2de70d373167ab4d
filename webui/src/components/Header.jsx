// Top bar: model name, context usage, settings.

import { shortModelName } from '../chat.js';
import { Icon } from './Icon.jsx';

function contextText(used, size) {
  const tokens = used || 0;
  if (!size) return `Context: ${tokens} tokens`;
  const percent = Math.min(100, Math.round((tokens / size) * 100));
  return `Context: ${tokens} / ${size} (${percent}%)`;
}

export function Header({ modelName, contextUsed, contextSize, onToggleSidebar, onOpenSettings }) {
  const full = contextSize && contextUsed ? contextUsed / contextSize >= 0.9 : false;
  return (
    <header class="header">
      <button type="button" class="icon-button menu-button" aria-label="Conversations" onClick={onToggleSidebar}>
        <Icon name="menu" size={18} />
      </button>
      <div class="model-name" data-testid="model-name" title={modelName}>
        {shortModelName(modelName) || 'Connecting…'}
      </div>
      <div class={`context-usage${full ? ' warn' : ''}`} data-testid="context-usage" title="Tokens used by this conversation in the model's context">
        {contextText(contextUsed, contextSize)}
      </div>
      <button type="button" class="icon-button" data-testid="settings-button" aria-label="Settings" title="Settings" onClick={onOpenSettings}>
        <Icon name="settings" size={18} />
      </button>
    </header>
  );
}
