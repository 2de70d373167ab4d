// Rendered Markdown with working "Copy" buttons on code blocks.

import { useMemo } from 'preact/hooks';
import { copyText, flashButton } from '../clipboard.js';
import { codeOfBlock, renderMarkdown } from '../markdown.js';

async function handleCodeCopy(event) {
  const button = event.target.closest && event.target.closest('.code-copy');
  if (!button) return;
  event.preventDefault();
  const ok = await copyText(codeOfBlock(button.closest('.code-block')));
  flashButton(button, ok ? 'Copied' : 'Copy failed');
}

export function Markdown({ text, class: className = '', testId = 'message-content' }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return (
    <div
      class={`markdown ${className}`.trim()}
      data-testid={testId}
      onClick={handleCodeCopy}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
