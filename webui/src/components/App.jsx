// Page shell: wires server state, conversations, chat streaming and settings together.

import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getApiKey } from '../api.js';
import { attachmentIds } from '../attachments.js';
import { contextTokens } from '../chat.js';
import { downloadConversation } from '../exporter.js';
import { useChat } from '../hooks/useChat.js';
import { useConversations } from '../hooks/useConversations.js';
import { useServer } from '../hooks/useServer.js';
import { deleteMedia, sweepOrphans } from '../media.js';
import { effectiveSettings, overridesFrom, serverDefaults } from '../settings.js';
import { KEY_SETTINGS, loadSettingOverrides, saveSettingOverrides } from '../storage.js';
import { Composer } from './Composer.jsx';
import { Header } from './Header.jsx';
import { MessageList } from './MessageList.jsx';
import { ApiKeyPrompt, LoadingState, OfflineState } from './Overlays.jsx';
import { SettingsDialog } from './SettingsDialog.jsx';
import { Sidebar } from './Sidebar.jsx';

function useSettings(uiSettings) {
  const [overrides, setOverrides] = useState(loadSettingOverrides);
  const [saveError, setSaveError] = useState(null);
  const settings = effectiveSettings(uiSettings, overrides);
  const latest = useRef(settings);
  latest.current = settings;

  const save = (values) => {
    const next = overridesFrom(values, uiSettings);
    setOverrides(next);
    setSaveError(saveSettingOverrides(next));
  };
  const getSettings = useCallback(() => latest.current, []);

  // Settings saved in another tab apply here too (and are not overwritten by a stale copy).
  useEffect(() => {
    const onStorage = (event) => {
      if (event.key === null || event.key === KEY_SETTINGS) setOverrides(loadSettingOverrides());
    };
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);
  return { settings, save, getSettings, saveError };
}

function ServerOverlay({ server }) {
  if (server.phase === 'loading') return <LoadingState message={server.message} progress={server.progress} />;
  if (server.phase === 'offline') return <OfflineState message={server.message} />;
  if (server.phase === 'auth') return <ApiKeyPrompt error={server.authError} onSubmit={server.submitApiKey} />;
  return null;
}

function Banners({ messages }) {
  const shown = messages.filter(Boolean);
  if (!shown.length) return null;
  return (
    <div class="banners">
      {shown.map((text) => <div key={text} class="error banner" data-testid="error-message" role="alert">{text}</div>)}
    </div>
  );
}

function useConversationActions(store, chat) {
  const rename = (conversation) => {
    const title = window.prompt('Rename conversation', conversation.title);
    if (title !== null && title.trim()) store.rename(conversation.id, title.trim());
  };
  const remove = (conversation) => {
    if (!window.confirm(`Delete "${conversation.title}"? This cannot be undone.`)) return;
    chat.stop(conversation.id);
    store.remove(conversation.id);
    deleteMedia(attachmentIds(conversation));
  };
  return { rename, remove, exportJson: downloadConversation };
}

// What the model reads besides text (/props modalities, as llama-server reports them).
function useModalities(props) {
  const vision = !!props?.modalities?.vision;
  const audio = !!props?.modalities?.audio;
  return useMemo(() => ({ vision, audio }), [vision, audio]);
}

// Stored attachments of conversations deleted (here or in another tab) go at start-up: once,
// against the list as loaded.
function useMediaSweep(conversations) {
  const loaded = useRef(conversations);
  useEffect(() => {
    sweepOrphans(new Set(loaded.current.flatMap(attachmentIds)));
  }, []);
}

export function App() {
  const server = useServer();
  const store = useConversations();
  useMediaSweep(store.conversations);
  const modalities = useModalities(server.props);
  const uiSettings = server.props?.ui_settings;
  const { settings, save: saveSettings, getSettings, saveError } = useSettings(uiSettings);
  const [mediaError, setMediaError] = useState(null);
  const chat = useChat({
    store, getSettings, modelName: server.modelName, onUnauthorized: server.requireAuth, onMediaError: setMediaError,
  });
  const actions = useConversationActions(store, chat);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const [sidebarOpen, setSidebarOpen] = useState(false);

  // A conversation deleted in another tab stops its answer here.
  useEffect(() => {
    for (const id of chat.streamingIds) {
      if (!store.conversations.some((conversation) => conversation.id === id)) chat.stop(id);
    }
  }, [chat.streamingIds, store.conversations, chat.stop]);

  const current = store.current;
  const streaming = current ? chat.streamingIds.has(current.id) : false;
  const contextSize = server.props?.default_generation_settings?.n_ctx || 0;

  const select = (id) => {
    store.select(id);
    setSidebarOpen(false);
  };
  const startNew = () => {
    store.startNew();
    setSidebarOpen(false);
  };
  const applySettings = (values, apiKey) => {
    saveSettings(values);
    setSettingsOpen(false);
    if (apiKey !== getApiKey()) server.submitApiKey(apiKey);
  };

  return (
    <div class="app">
      <Sidebar
        conversations={store.conversations}
        currentId={store.currentId}
        streamingIds={chat.streamingIds}
        open={sidebarOpen}
        buildInfo={server.props?.build_info}
        onNew={startNew}
        onSelect={select}
        onRename={actions.rename}
        onExport={actions.exportJson}
        onDelete={actions.remove}
      />
      {sidebarOpen && <div class="scrim" onClick={() => setSidebarOpen(false)} />}
      <main class="main">
        <Header
          modelName={server.modelName}
          contextUsed={current ? contextTokens(current.messages) : 0}
          contextSize={contextSize}
          onToggleSidebar={() => setSidebarOpen((open) => !open)}
          onOpenSettings={() => setSettingsOpen(true)}
        />
        <Banners messages={[store.storageError, saveError, mediaError, server.phase === 'ready' ? server.message : '']} />
        <MessageList
          conversation={current}
          streaming={streaming}
          modelName={server.modelName}
          onEdit={(messageId, text) => chat.editAndResend(current, messageId, text)}
          onRegenerate={(messageId) => chat.regenerate(current, messageId)}
        />
        <Composer
          streaming={streaming}
          disabled={server.phase === 'loading' || server.phase === 'auth'}
          focusKey={store.currentId}
          modalities={modalities}
          onSend={(text, attachments) => chat.send(current, text, attachments)}
          onStop={() => current && chat.stop(current.id)}
        />
      </main>
      {settingsOpen && (
        <SettingsDialog
          settings={settings}
          uiSettings={uiSettings}
          serverDefaults={serverDefaults(server.props)}
          apiKey={getApiKey()}
          onSave={applySettings}
          onClose={() => setSettingsOpen(false)}
        />
      )}
      <ServerOverlay server={server} />
    </div>
  );
}
