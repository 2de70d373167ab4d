// Download a conversation as a JSON file.

function fileNameFor(conversation) {
  const slug = (conversation.title || 'conversation')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `hearth-${slug || 'conversation'}-${conversation.id.slice(0, 8)}.json`;
}

export function conversationExport(conversation) {
  return {
    format: 'hearth-conversation',
    version: 1,
    exportedAt: new Date().toISOString(),
    ...conversation,
  };
}

export function downloadConversation(conversation) {
  const json = JSON.stringify(conversationExport(conversation), null, 2);
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileNameFor(conversation);
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
