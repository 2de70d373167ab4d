// Chat settings: page defaults, operator defaults (--ui-config), user overrides.
// Effective settings = page defaults < operator ui_settings < user overrides.
// An empty sampling value means "let the server decide" and is not sent.

export const SAMPLING_FIELDS = [
  { key: 'temperature', label: 'Temperature', step: '0.05', min: '0', hint: 'Randomness; 0 = greedy' },
  { key: 'top_k', label: 'Top-K', step: '1', min: '0', integer: true, hint: '0 = disabled' },
  { key: 'top_p', label: 'Top-P', step: '0.01', min: '0', max: '1', hint: '1 = disabled' },
  { key: 'min_p', label: 'Min-P', step: '0.01', min: '0', max: '1', hint: '0 = disabled' },
  { key: 'max_tokens', label: 'Max tokens', step: '1', min: '-1', integer: true, hint: '-1 or empty = unlimited' },
  { key: 'repeat_penalty', label: 'Repeat penalty', step: '0.05', min: '0', hint: '1 = disabled' },
  { key: 'seed', label: 'Seed', step: '1', integer: true, hint: 'Empty or -1 = random' },
];

export const PAGE_DEFAULTS = {
  systemPrompt: '',
  temperature: '',
  top_k: '',
  top_p: '',
  min_p: '',
  max_tokens: '',
  repeat_penalty: '',
  seed: '',
};

// Names that operators (or llama.cpp-style ui configs) may use for our keys.
const ALIASES = {
  systemPrompt: ['systemPrompt', 'system_prompt', 'systemMessage', 'system_message'],
  max_tokens: ['max_tokens', 'n_predict', 'max_new_tokens'],
  repeat_penalty: ['repeat_penalty', 'repetition_penalty'],
};

function toFieldValue(value) {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : String(value);
}

// Maps an operator ui_settings object onto our setting keys.
export function normalizeUiSettings(uiSettings) {
  const result = {};
  if (!uiSettings || typeof uiSettings !== 'object') return result;
  for (const key of Object.keys(PAGE_DEFAULTS)) {
    const names = ALIASES[key] || [key];
    const found = names.find((name) => uiSettings[name] !== undefined);
    if (found) result[key] = toFieldValue(uiSettings[found]);
  }
  return result;
}

export function baseSettings(uiSettings) {
  return { ...PAGE_DEFAULTS, ...normalizeUiSettings(uiSettings) };
}

export function effectiveSettings(uiSettings, overrides) {
  const result = baseSettings(uiSettings);
  for (const key of Object.keys(PAGE_DEFAULTS)) {
    if (overrides && overrides[key] !== undefined) result[key] = toFieldValue(overrides[key]);
  }
  return result;
}

// Keeps only the values that differ from the base, so operator defaults keep applying.
export function overridesFrom(values, uiSettings) {
  const base = baseSettings(uiSettings);
  const overrides = {};
  for (const key of Object.keys(PAGE_DEFAULTS)) {
    const value = toFieldValue(values[key]).trim();
    const normalized = key === 'systemPrompt' ? toFieldValue(values[key]) : value;
    if (normalized !== base[key]) overrides[key] = normalized;
  }
  return overrides;
}

// Returns an error text for the first invalid sampling value, or null.
export function validateSettings(values) {
  for (const field of SAMPLING_FIELDS) {
    const text = toFieldValue(values[field.key]).trim();
    if (text === '') continue;
    const number = Number(text);
    if (!Number.isFinite(number)) return `${field.label} must be a number.`;
    if (field.integer && !Number.isInteger(number)) return `${field.label} must be a whole number.`;
  }
  return null;
}

// Request body fields for the sampling settings that have a value.
export function samplingParams(settings) {
  const params = {};
  for (const field of SAMPLING_FIELDS) {
    const text = toFieldValue(settings[field.key]).trim();
    if (text === '') continue;
    const number = Number(text);
    if (Number.isFinite(number)) params[field.key] = number;
  }
  return params;
}

// Server defaults (from /props) shown as placeholders in the settings dialog.
export function serverDefaults(props) {
  const params = props?.default_generation_settings?.params || {};
  const result = {};
  for (const field of SAMPLING_FIELDS) {
    let value = params[field.key];
    if (field.key === 'max_tokens' && value === undefined) value = params.n_predict;
    if (field.key === 'seed' && (value === -1 || value >= 0xffffffff)) value = 'random';
    if (typeof value === 'number') value = roundForDisplay(value);
    if (value !== undefined) result[field.key] = value;
  }
  return result;
}

function roundForDisplay(value) {
  if (Number.isInteger(value)) return String(value);
  return String(Math.round(value * 1e4) / 1e4);
}
