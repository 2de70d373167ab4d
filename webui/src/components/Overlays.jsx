// Full-page states: model loading, server unreachable, API key needed.

import { useState } from 'preact/hooks';
import { getApiKey } from '../api.js';

export function LoadingState({ message, progress }) {
  const percent = typeof progress === 'number' ? Math.round(progress * 100) : null;
  return (
    <div class="overlay solid">
      <div class="card status-card" data-testid="loading-state" role="status" aria-live="polite">
        <div class="spinner" aria-hidden="true" />
        <h2>Loading model…</h2>
        <p class="muted">{message && message !== 'Loading model' ? message : 'The server is loading the model. This page will continue when it is ready.'}</p>
        {percent !== null && (
          <div class="progress" aria-label={`${percent}%`}>
            <div class="progress-bar" style={{ width: `${percent}%` }} />
            <span class="progress-text">{percent}%</span>
          </div>
        )}
      </div>
    </div>
  );
}

export function OfflineState({ message }) {
  return (
    <div class="overlay solid">
      <div class="card status-card" role="status">
        <div class="spinner" aria-hidden="true" />
        <h2>Cannot reach the server</h2>
        <div class="error" data-testid="error-message">{message || 'The server did not answer.'}</div>
        <p class="muted">Retrying automatically…</p>
      </div>
    </div>
  );
}

export function ApiKeyPrompt({ error, onSubmit }) {
  // After a refused key the prompt comes back with it filled in, so a typo can be fixed.
  const [key, setKey] = useState(getApiKey() || '');
  const submit = (event) => {
    event.preventDefault();
    if (key.trim()) onSubmit(key.trim());
  };
  return (
    <div class="overlay solid">
      <form class="card status-card" data-testid="api-key-prompt" onSubmit={submit}>
        <h2>API key required</h2>
        <p class="muted">This server was started with an API key. Enter it to continue; it is stored in this browser.</p>
        <input
          type="password"
          data-testid="api-key-input"
          autoComplete="off"
          autoFocus
          placeholder="API key"
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        {error && <div class="error" data-testid="error-message" role="alert">{error}</div>}
        <button type="submit" class="primary" data-testid="api-key-save" disabled={!key.trim()}>Save</button>
      </form>
    </div>
  );
}
