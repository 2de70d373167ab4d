// Server connection state: health polling while the model loads, /props, API key.
// phase: 'connecting' | 'loading' | 'offline' | 'auth' | 'ready'

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { fetchFirstModelId, fetchHealth, fetchProps, getApiKey, setApiKey } from '../api.js';

const POLL_LOADING_MS = 1000;
const POLL_OFFLINE_MS = 2000;

const INITIAL = {
  phase: 'connecting',
  message: '',
  progress: null,
  props: null,
  modelName: '',
  authError: '',
};

// The abort listener is removed after each wait: polling during a long download would
// otherwise pile up one listener per poll on the same signal.
function wait(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

function authMessage() {
  return getApiKey() ? 'Invalid API key. Please check it and try again.' : '';
}

async function modelNameFor(props, signal) {
  if (props && typeof props.model_alias === 'string' && props.model_alias) return props.model_alias;
  try {
    return await fetchFirstModelId(signal);
  } catch {
    return '';
  }
}

// Loads /props (falling back to /v1/models); returns the next state fields.
async function loadServerInfo(signal) {
  try {
    const props = await fetchProps(signal);
    return { phase: 'ready', props, modelName: await modelNameFor(props, signal), message: '' };
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    if (err.unauthorized) return { phase: 'auth', authError: authMessage() };
    try {
      const modelName = await fetchFirstModelId(signal);
      return { phase: 'ready', props: null, modelName, message: '' };
    } catch (fallbackErr) {
      if (fallbackErr.name === 'AbortError') throw fallbackErr;
      if (fallbackErr.unauthorized) return { phase: 'auth', authError: authMessage() };
      return { phase: 'ready', props: null, modelName: '', message: err.message };
    }
  }
}

// Polls /health until the server is up, then loads its info.
async function connect(signal, setState) {
  while (!signal.aborted) {
    const health = await fetchHealth(signal);
    if (signal.aborted) return;
    if (health.state === 'ok') break;
    if (health.state === 'unauthorized') {
      setState((s) => ({ ...s, phase: 'auth', authError: authMessage() }));
      return;
    }
    const phase = health.state === 'loading' ? 'loading' : 'offline';
    setState((s) => ({ ...s, phase, message: health.message, progress: health.progress }));
    await wait(phase === 'loading' ? POLL_LOADING_MS : POLL_OFFLINE_MS, signal);
  }
  if (signal.aborted) return;
  const info = await loadServerInfo(signal);
  if (!signal.aborted) setState((s) => ({ ...s, progress: null, ...info }));
}

export function useServer() {
  const [state, setState] = useState(INITIAL);
  const controller = useRef(null);

  const reconnect = useCallback(() => {
    if (controller.current) controller.current.abort();
    const current = new AbortController();
    controller.current = current;
    connect(current.signal, setState).catch((err) => {
      if (err.name !== 'AbortError') setState((s) => ({ ...s, phase: 'offline', message: err.message }));
    });
  }, []);

  useEffect(() => {
    reconnect();
    return () => controller.current && controller.current.abort();
  }, [reconnect]);

  const submitApiKey = useCallback((key) => {
    setApiKey(key);
    setState((s) => ({ ...s, phase: 'connecting', authError: '' }));
    reconnect();
  }, [reconnect]);

  // Called when a request is refused with 401 while chatting.
  const requireAuth = useCallback(() => {
    setState((s) => ({ ...s, phase: 'auth', authError: authMessage() || 'This server needs an API key.' }));
  }, []);

  return { ...state, reconnect, submitApiKey, requireAuth };
}
