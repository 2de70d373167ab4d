// Markdown to HTML. Raw HTML in the source is disabled (model output cannot inject
// markup), images are disabled (no requests to other hosts), code is highlighted.

import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = {
  bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml,
};
for (const [name, definition] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, definition);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });

const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
md.disable('image');

// markdown-it already refuses javascript:, vbscript:, file: and most data: URLs; links
// here are narrowed further to http(s), mailto and relative URLs (no data:, blob:, ...).
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:/i;
const SAFE_SCHEME_RE = /^(https?|mailto):/i;
md.validateLink = (url) => {
  const text = String(url).trim();
  return SCHEME_RE.test(text) ? SAFE_SCHEME_RE.test(text) : true;
};

const escapeHtml = md.utils.escapeHtml;

function highlightCode(code, language) {
  if (language && hljs.getLanguage(language)) {
    try {
      return hljs.highlight(code, { language, ignoreIllegals: true }).value;
    } catch {
      // Fall through to plain text.
    }
  }
  return escapeHtml(code);
}

function codeBlockHtml(code, language) {
  const label = language || 'text';
  const languageClass = language ? ` language-${escapeHtml(language)}` : '';
  return (
    '<div class="code-block">' +
    `<div class="code-head"><span class="code-lang">${escapeHtml(label)}</span>` +
    '<button type="button" class="code-copy" data-testid="code-copy">Copy</button></div>' +
    `<pre><code class="hljs${languageClass}">${highlightCode(code, language)}</code></pre>` +
    '</div>\n'
  );
}

md.renderer.rules.fence = (tokens, index) => {
  const token = tokens[index];
  const info = token.info ? md.utils.unescapeAll(token.info).trim() : '';
  const language = info.split(/\s+/)[0].toLowerCase();
  return codeBlockHtml(token.content, language);
};

md.renderer.rules.code_block = (tokens, index) => codeBlockHtml(tokens[index].content, '');

const defaultLinkOpen = md.renderer.rules.link_open || ((tokens, index, options, env, self) =>
  self.renderToken(tokens, index, options));

md.renderer.rules.link_open = (tokens, index, options, env, self) => {
  tokens[index].attrSet('target', '_blank');
  tokens[index].attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, index, options, env, self);
};

export function renderMarkdown(text) {
  return md.render(text || '');
}

// Raw source of a rendered code block (the text content of its <code>).
export function codeOfBlock(block) {
  const code = block && block.querySelector('pre code');
  return code ? code.textContent.replace(/\n$/, '') : '';
}
