// Button that copies a piece of text and briefly confirms it.

import { useEffect, useRef, useState } from 'preact/hooks';
import { copyText } from '../clipboard.js';
import { Icon } from './Icon.jsx';

export function CopyButton({ text, label = 'Copy', testId = 'message-copy' }) {
  const [state, setState] = useState('idle');
  const timer = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);

  const onClick = async () => {
    const ok = await copyText(text);
    setState(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 1500);
  };

  const caption = state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label;
  return (
    <button type="button" class="ghost small" data-testid={testId} onClick={onClick} title="Copy message">
      <Icon name="copy" size={14} />
      <span>{caption}</span>
    </button>
  );
}
