// Download a conversation as a JSON file. Attached images and audio go in it as data URLs
// (attachments[].dataUrl), so that the file holds the whole conversation.

import { attachmentIds } from './attachments.js';
import { loadMedia } from './media.js';

function fileNameFor(conversation) {
  const slug = (conversation.title || 'conversation')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `hearth-${slug || 'conversation'}-${conversation.id.slice(0, 8)}.json`;
}

// media: Map id -> data URL of the conversation's attachments (missing ones are left out).
export function conversationExport(conversation, media = new Map()) {
  const messages = conversation.messages.map((message) => (message.attachments
    ? { ...message, attachments: message.attachments.map((meta) => ({ ...meta, dataUrl: media.get(meta.id) })) }
    : message));
  return {
    format: 'hearth-conversation',
    version: 1,
    exportedAt: new Date().toISOString(),
    ...conversation,
    messages,
  };
}

export async function downloadConversation(conversation) {
  const media = await loadMedia(attachmentIds(conversation));
  const json = JSON.stringify(conversationExport(conversation, media), null, 2);
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileNameFor(conversation);
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
