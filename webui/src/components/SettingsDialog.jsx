// Settings dialog: system prompt, sampling parameters, API key.

import { useEffect, useState } from 'preact/hooks';
import { baseSettings, SAMPLING_FIELDS, validateSettings } from '../settings.js';
import { Icon } from './Icon.jsx';

function testIdFor(key) {
  return `setting-${key.replace(/_/g, '-')}`;
}

function NumberField({ field, value, placeholder, onChange }) {
  return (
    <label class="field">
      <span class="field-label">{field.label}</span>
      <input
        type="number"
        inputMode="decimal"
        data-testid={testIdFor(field.key)}
        name={field.key}
        step={field.step}
        min={field.min}
        max={field.max}
        value={value}
        placeholder={placeholder !== undefined ? `server: ${placeholder}` : 'server default'}
        onInput={(event) => onChange(field.key, event.currentTarget.value)}
      />
      <span class="field-hint">{field.hint}</span>
    </label>
  );
}

function useEscape(onClose) {
  useEffect(() => {
    const onKey = (event) => {
      if (event.key === 'Escape') onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);
}

export function SettingsDialog({ settings, uiSettings, serverDefaults, apiKey, onSave, onClose }) {
  const [values, setValues] = useState(settings);
  const [key, setKey] = useState(apiKey);
  const [error, setError] = useState('');
  useEscape(onClose);

  const change = (name, value) => setValues((current) => ({ ...current, [name]: value }));
  const reset = () => {
    setValues(baseSettings(uiSettings));
    setError('');
  };
  const save = (event) => {
    event.preventDefault();
    const problem = validateSettings(values);
    if (problem) {
      setError(problem);
      return;
    }
    onSave(values, key.trim());
  };

  return (
    <div class="overlay" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <form
        class="card dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="settings-title"
        data-testid="settings-dialog"
        onSubmit={save}
        noValidate
      >
        <div class="dialog-head">
          <h2 id="settings-title">Settings</h2>
          <button type="button" class="icon-button" aria-label="Close" onClick={onClose}>
            <Icon name="close" size={18} />
          </button>
        </div>
        <label class="field wide">
          <span class="field-label">System prompt</span>
          <textarea
            data-testid="setting-system-prompt"
            rows={4}
            value={values.systemPrompt}
            placeholder="Optional instructions sent as the first message"
            onInput={(event) => change('systemPrompt', event.currentTarget.value)}
          />
        </label>
        <div class="field-grid">
          {SAMPLING_FIELDS.map((field) => (
            <NumberField
              key={field.key}
              field={field}
              value={values[field.key]}
              placeholder={serverDefaults[field.key]}
              onChange={change}
            />
          ))}
        </div>
        <label class="field wide">
          <span class="field-label">API key</span>
          <input
            type="password"
            data-testid="setting-api-key"
            autoComplete="off"
            value={key}
            placeholder="Only needed when the server was started with --api-key"
            onInput={(event) => setKey(event.currentTarget.value)}
          />
        </label>
        <p class="muted small-text">Empty fields use the server's defaults. Settings are stored in this browser.</p>
        {error && <div class="error" data-testid="error-message" role="alert">{error}</div>}
        <div class="dialog-actions">
          <button type="button" class="ghost" data-testid="settings-reset" onClick={reset}>Reset to defaults</button>
          <span class="spacer" />
          <button type="button" class="secondary" data-testid="settings-cancel" onClick={onClose}>Cancel</button>
          <button type="submit" class="primary" data-testid="settings-save">Save</button>
        </div>
      </form>
    </div>
  );
}
