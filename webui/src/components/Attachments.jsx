// Attached images (thumbnails) and audio (chips with the file name, a player in the
// conversation), in the composer before sending and in the user's messages.

import { useEffect, useState } from 'preact/hooks';
import { formatBytes } from '../attachments.js';
import { cachedMedia, loadMedia } from '../media.js';
import { Icon } from './Icon.jsx';

// meta: { id, kind, name, size }; dataUrl: the bytes, or null while loading / when lost.
export function AttachmentChip({ meta, dataUrl, testId, onRemove, player = false }) {
  const label = `${meta.name} (${formatBytes(meta.size || 0)})`;
  const image = meta.kind === 'image';
  return (
    <div class={`attachment ${image ? 'attachment-image' : 'attachment-audio'}`} data-testid={testId}
      data-kind={meta.kind} title={label}>
      {image && dataUrl && <img src={dataUrl} alt={meta.name} />}
      {image && !dataUrl && <span class="attachment-missing muted">{dataUrl === null ? 'image not stored' : '…'}</span>}
      {!image && (
        <span class="attachment-name">
          <Icon name="audio" size={14} />
          <span>{meta.name}</span>
        </span>
      )}
      {!image && player && dataUrl && <audio controls preload="none" src={dataUrl} />}
      {onRemove && (
        <button type="button" class="attachment-remove" data-testid="attachment-remove"
          aria-label={`Remove ${meta.name}`} title={`Remove ${meta.name}`} onClick={onRemove}>
          <Icon name="close" size={12} />
        </button>
      )}
    </div>
  );
}

// The data URL of a stored attachment: a string, undefined while loading, null when missing.
function useMediaData(id) {
  const [data, setData] = useState(() => cachedMedia(id));
  useEffect(() => {
    if (data) return undefined;
    let live = true;
    loadMedia([id]).then((found) => {
      if (live) setData(found.get(id) ?? null);
    });
    return () => {
      live = false;
    };
  }, [id]);
  return data;
}

function StoredAttachment({ meta }) {
  return <AttachmentChip meta={meta} dataUrl={useMediaData(meta.id)} testId="message-attachment" player />;
}

export function MessageAttachments({ attachments }) {
  if (!attachments || !attachments.length) return null;
  return (
    <div class="attachments message-attachments">
      {attachments.map((meta) => <StoredAttachment key={meta.id} meta={meta} />)}
    </div>
  );
}
