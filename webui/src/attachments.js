// Images and audio attached to user messages: which files are accepted, how they are read,
// and the OpenAI content parts they are sent as. No Preact here (the tests import it too).
//
// A message keeps only the attachment's metadata ({ id, kind, name, mime, size, format });
// the bytes, as a data URL, live in IndexedDB (media.js), because a few images would fill
// localStorage's few megabytes.

import { newId } from './storage.js';

export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_ATTACHMENTS = 10;

// The image formats the server decodes (stb_image, as llama-server); others would only come
// back as a 400 after the upload.
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/bmp'];
// input_audio's two formats (OpenAI, llama-server): type or file extension -> format.
const AUDIO_FORMATS = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};
const AUDIO_EXTENSIONS = { wav: 'wav', mp3: 'mp3' };

const NO_PROJECTOR = 'the server has no multimodal projector for this model (--mmproj)';

function extensionOf(name) {
  const match = /\.([a-z0-9]+)$/i.exec(name || '');
  return match ? match[1].toLowerCase() : '';
}

// 'image' | 'audio' | '' for a File (by type, else by extension: some systems leave the
// type of .wav files empty).
function mediaKind(file) {
  if (IMAGE_TYPES.includes(file.type)) return 'image';
  if (AUDIO_FORMATS[file.type] || (!file.type && AUDIO_EXTENSIONS[extensionOf(file.name)])) return 'audio';
  return '';
}

function audioFormat(file) {
  return AUDIO_FORMATS[file.type] || AUDIO_EXTENSIONS[extensionOf(file.name)];
}

// 10485760 -> "10 MB", 12900000 -> "12.3 MB", 2048 -> "2 KB".
export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${Number((bytes / (1024 * 1024)).toFixed(1))} MB`;
}

// The file picker's `accept` for what the model reads ('' when nothing).
export function acceptFor(modalities) {
  const types = [];
  if (modalities.vision) types.push(...IMAGE_TYPES);
  if (modalities.audio) types.push('.wav', '.mp3', 'audio/wav', 'audio/mpeg');
  return types.join(',');
}

// Why the attach button is unavailable, or '' when the model reads images or audio.
export function unavailableReason(modalities) {
  return modalities.vision || modalities.audio ? '' : `Attaching files is unavailable: ${NO_PROJECTOR}.`;
}

export function attachTitle(modalities) {
  if (modalities.vision && modalities.audio) return 'Attach images or audio (WAV, MP3)';
  if (modalities.vision) return 'Attach images';
  if (modalities.audio) return 'Attach audio (WAV, MP3)';
  return unavailableReason(modalities);
}

// Returns '' when `file` may be attached, else the message that says why not.
export function refusalFor(file, modalities) {
  const kind = mediaKind(file);
  const name = file.name || 'The pasted file';
  if (!kind) {
    const wanted = [modalities.vision && 'PNG, JPEG, GIF or BMP images', modalities.audio && 'WAV or MP3 audio']
      .filter(Boolean).join(' and ');
    return wanted ? `${name} cannot be attached: only ${wanted} are accepted.` : `${name} cannot be attached: ${NO_PROJECTOR}.`;
  }
  if (kind === 'image' && !modalities.vision) return `This model cannot read images: ${NO_PROJECTOR}.`;
  if (kind === 'audio' && !modalities.audio) return `This model cannot read audio: ${NO_PROJECTOR}.`;
  if (file.size > MAX_ATTACHMENT_BYTES) {
    return `${name} is too large (${formatBytes(file.size)}): files up to ${formatBytes(MAX_ATTACHMENT_BYTES)} can be attached.`;
  }
  if (file.size === 0) return `${name} is empty.`;
  return '';
}

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error('could not read the file'));
    reader.readAsDataURL(file);
  });
}

// Reads an accepted file: { meta, dataUrl }. Pasted images have no name; they get one.
export async function readAttachment(file) {
  const kind = mediaKind(file);
  const dataUrl = await readAsDataUrl(file);
  const fallbackName = kind === 'image' ? `pasted-image.${file.type.split('/')[1] || 'png'}` : 'audio';
  const meta = { id: newId(), kind, name: file.name || fallbackName, mime: file.type, size: file.size };
  if (kind === 'audio') meta.format = audioFormat(file);
  return { meta, dataUrl };
}

// The base64 payload of a data URL (input_audio wants it without the "data:...," prefix).
function base64Of(dataUrl) {
  const comma = dataUrl.indexOf(',');
  return comma < 0 ? dataUrl : dataUrl.slice(comma + 1);
}

function mediaPart(meta, dataUrl) {
  if (meta.kind === 'audio') return { type: 'input_audio', input_audio: { data: base64Of(dataUrl), format: meta.format } };
  return { type: 'image_url', image_url: { url: dataUrl } };
}

// A user message's content for the request: the plain text, or, with attachments, a text
// part (when there is text) followed by one part per attachment. dataOf(id) gives the data URL.
export function messageContent(message, dataOf) {
  const attachments = message.attachments || [];
  if (!attachments.length) return message.content;
  const parts = message.content ? [{ type: 'text', text: message.content }] : [];
  for (const meta of attachments) parts.push(mediaPart(meta, dataOf(meta.id)));
  return parts;
}

// The files of a paste or drop (DataTransfer), or [] when it carries none.
export function filesOf(transfer) {
  if (!transfer) return [];
  if (transfer.files && transfer.files.length) return [...transfer.files];
  return [...(transfer.items || [])].filter((item) => item.kind === 'file').map((item) => item.getAsFile()).filter(Boolean);
}

export function attachmentIds(conversation) {
  const ids = [];
  for (const message of conversation.messages || []) {
    for (const meta of message.attachments || []) ids.push(meta.id);
  }
  return ids;
}
